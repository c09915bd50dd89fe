package dev.taskline.worker;

import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A draining node refuses new work with 503, lets quick tasks finish, and hands slow ones back to
 * the journal so that the next node starts them at once, without waiting out their leases.
 */
class ShutdownDrainTest {

    private static final String CONFIG = """
      {"queues": {"default": {"slots": 2, "leaseMs": 600000, "heartbeatMs": 200000}}}
      """;

    @Test
    void draining_refuses_new_work_finishes_quick_tasks_and_releases_slow_ones() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock();
        String quick;
        String slow;
        try (TestNode node = TestNode.start(db, CONFIG, clock)) {
            quick = node.post("/api/tasks", new JsonObject().put("type", "gate"))
                    .bodyAsJsonObject()
                    .getString("id");
            GateHandler.Call quickCall = GateHandler.next(TestNode.WAIT);
            slow = node.post("/api/tasks", new JsonObject().put("type", "gate"))
                    .bodyAsJsonObject()
                    .getString("id");
            GateHandler.Call slowCall = GateHandler.next(TestNode.WAIT);

            var drained = node.node.shutdown(Duration.ofMillis(300));
            HttpResponse<Buffer> refused = node.post("/api/tasks", new JsonObject().put("type", "gate"));
            assertEquals(503, refused.statusCode());
            assertNotNull(refused.getHeader("Retry-After"));
            assertEquals(503, node.get("/health/ready").statusCode());

            quickCall.succeed(new JsonObject());
            TestNode.await(drained);
            assertEquals("succeeded", node.getJson("/api/tasks/" + quick).getString("state"));
            JsonObject released = node.getJson("/api/tasks/" + slow);
            assertEquals("pending", released.getString("state"));
            assertEquals(0, released.getInteger("attempt"), "a release does not spend an attempt");
            assertEquals(2, released.getLong("leaseVersion"), "the release fenced the old holder");
            assertEquals(List.of("submitted", "claimed", "released"), reasons(released));
            slowCall.succeed(new JsonObject().put("late", true)); // too late: fenced
        }
        // Same clock: no lease could have lapsed, yet the next node starts the task at once.
        try (TestNode next = TestNode.start(db, CONFIG, clock)) {
            GateHandler.Call again = GateHandler.next(TestNode.WAIT);
            assertEquals(slow, again.taskId().toString());
            assertEquals(1, again.attempt());
            again.succeed(new JsonObject());
            JsonObject done = next.waitForState(slow, "succeeded");
            assertEquals(3, done.getLong("leaseVersion"));
        }
    }
}
