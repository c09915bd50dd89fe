package dev.taskline.worker;

import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotEquals;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Two nodes on one journal. Node A's worker stops renewing its lease (its clock stands still while
 * node B's moves past the deadline); B takes the task over with a higher lease version, and A's
 * late result is refused.
 */
class LeaseTakeoverTest {

    private static final String CONFIG = """
      {"queues": {"default": {"slots": 2, "leaseMs": 1000, "heartbeatMs": 200}}}
      """;

    private static TestNode a;
    private static TestNode b;

    @BeforeAll
    static void start() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        a = TestNode.start(db, CONFIG, new MutableClock());
        b = TestNode.start(db, CONFIG, new MutableClock());
    }

    @AfterAll
    static void stop() throws Exception {
        a.close();
        b.close();
    }

    @Test
    void a_task_whose_lease_lapses_is_taken_over_and_the_late_result_is_refused() throws Exception {
        String id = a.post("/api/tasks", new JsonObject().put("type", "gate"))
                .bodyAsJsonObject()
                .getString("id");
        GateHandler.Call onA = GateHandler.next(TestNode.WAIT);
        JsonObject running = a.waitForState(id, "running");
        assertEquals(1, running.getLong("leaseVersion"));
        assertEquals(a.node.nodeId() + "/default", running.getString("workerId"));

        b.clock.advance(Duration.ofSeconds(10));
        b.node.passes()
                .recovery()
                .runOnce()
                .toCompletionStage()
                .toCompletableFuture()
                .get();
        GateHandler.Call onB = GateHandler.next(TestNode.WAIT);
        assertEquals(2, onB.attempt());
        JsonObject takenOver = b.getJson("/api/tasks/" + id);
        assertEquals(3, takenOver.getLong("leaseVersion"));
        assertEquals(b.node.nodeId() + "/default", takenOver.getString("workerId"));

        // A's progress and result arrive late: neither lands.
        onA.progress(99, "late");
        onA.succeed(new JsonObject().put("by", "a"));
        a.until("/api/queues", q -> q.getJsonArray("queues").getJsonObject(0).getInteger("fencedWrites") >= 1);

        onB.progress(50, "half");
        onB.succeed(new JsonObject().put("by", "b"));
        JsonObject done = b.waitForState(id, "succeeded");
        assertEquals("b", done.getJsonObject("result").getString("by"));
        assertNotEquals("late", done.getJsonObject("progress").getString("message"));
        assertEquals(2, done.getInteger("attempt"));

        JsonArray history = done.getJsonArray("history");
        assertEquals(List.of("submitted", "claimed", "lease_expired", "claimed", "succeeded"), reasons(done));
        assertEquals(
                List.of(0L, 1L, 2L, 3L, 3L),
                history.stream()
                        .map(e -> ((JsonObject) e).getLong("leaseVersion"))
                        .toList());
        assertEquals(
                1,
                history.stream()
                        .filter(e -> ((JsonObject) e).getString("to").equals("succeeded"))
                        .count(),
                "one result committed");
    }
}
