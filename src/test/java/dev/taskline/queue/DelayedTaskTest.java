package dev.taskline.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** Delayed tasks: they wait apart from the queue, start when due, have their own bound, survive restarts. */
class DelayedTaskTest {

    private static final String CONFIG =
            "{\"queues\": {\"default\": {\"slots\": 2, \"capacity\": 5, \"scheduledCapacity\": 2}}}";

    private static JsonObject queue(TestNode node) throws Exception {
        return node.getJson("/api/queues").getJsonArray("queues").getJsonObject(0);
    }

    @Test
    void a_delayed_task_takes_no_waiting_place_and_starts_when_due() throws Exception {
        GateHandler.reset();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG)) {
            HttpResponse<Buffer> accepted =
                    node.post("/api/tasks", new JsonObject().put("type", "gate").put("delayMs", 5_000));
            assertEquals(202, accepted.statusCode());
            String id = accepted.bodyAsJsonObject().getString("id");
            assertEquals(
                    node.clock.instant().plusSeconds(5),
                    Instant.parse(accepted.bodyAsJsonObject().getString("runAt")));
            JsonObject q = queue(node);
            assertEquals(1, q.getInteger("scheduled"));
            assertEquals(0, q.getInteger("waiting"));

            assertEquals(0, node.advance(Duration.ofMillis(4_999)));
            assertEquals("pending", node.getJson("/api/tasks/" + id).getString("state"));
            node.advance(Duration.ofMillis(1));
            GateHandler.Call call = GateHandler.next(TestNode.WAIT);
            assertEquals(id, call.taskId().toString());
            call.succeed(new JsonObject());
            node.waitForState(id, "succeeded");
        }
    }

    @Test
    void scheduled_tasks_have_their_own_bound() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG)) {
            Instant later = node.clock.instant().plusSeconds(3600);
            for (int i = 0; i < 2; i++) {
                assertEquals(
                        202,
                        node.post(
                                        "/api/tasks",
                                        new JsonObject().put("type", "sleep").put("runAt", later.toString()))
                                .statusCode());
            }
            HttpResponse<Buffer> refused = node.post(
                    "/api/tasks", new JsonObject().put("type", "sleep").put("delayMs", 1000));
            assertEquals(429, refused.statusCode());
            assertEquals(
                    "urn:taskline:problem:scheduled-full",
                    refused.bodyAsJsonObject().getString("type"));
            assertEquals(
                    202,
                    node.post("/api/tasks", new JsonObject().put("type", "sleep"))
                            .statusCode(),
                    "immediate tasks still fit");
            assertEquals(
                    422,
                    node.post(
                                    "/api/tasks",
                                    new JsonObject()
                                            .put("type", "sleep")
                                            .put("delayMs", 1)
                                            .put("runAt", later.toString()))
                            .statusCode());
            assertEquals(
                    422,
                    node.post(
                                    "/api/tasks",
                                    new JsonObject().put("type", "sleep").put("runAt", "tomorrow"))
                            .statusCode());
        }
    }

    @Test
    void a_delayed_task_survives_a_restart() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock();
        String id;
        try (TestNode node = TestNode.start(db, CONFIG, clock)) {
            id = node.post("/api/tasks", new JsonObject().put("type", "gate").put("delayMs", 60_000))
                    .bodyAsJsonObject()
                    .getString("id");
        }
        clock.advance(Duration.ofSeconds(61));
        try (TestNode restarted = TestNode.start(db, CONFIG, clock)) {
            GateHandler.Call call = GateHandler.next(TestNode.WAIT);
            assertEquals(id, call.taskId().toString());
            call.succeed(new JsonObject());
            JsonObject done = restarted.waitForState(id, "succeeded");
            assertTrue(Instant.parse(done.getString("startedAt"))
                    .isAfter(Instant.parse(done.getString("runAt")).minusMillis(1)));
        }
    }
}
