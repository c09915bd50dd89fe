package dev.taskline.worker;

import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Tasks a worker claims ahead of a free slot: leased and journaled running, but their handlers have
 * not started. A cancel ends one without running it; a drain hands it back at once; the counts show
 * it among the waiting.
 */
class ClaimAheadTest {

    private static final String CONFIG = """
      {"queues": {"default": {"slots": 1, "claimAhead": 4, "leaseMs": 600000, "heartbeatMs": 200000}}}
      """;

    @Test
    void a_task_claimed_ahead_and_cancelled_ends_cancelled_without_running() throws Exception {
        GateHandler.reset();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, new MutableClock())) {
            warmUp(node);
            String first = submitGate(node);
            GateHandler.Call running = GateHandler.next(TestNode.WAIT);
            String ahead = submitGate(node);
            JsonObject claimed = node.waitForState(ahead, "running");
            assertEquals(List.of("submitted", "claimed"), reasons(claimed), "leased while the slot is busy");
            JsonObject queue =
                    node.getJson("/api/queues").getJsonArray("queues").getJsonObject(0);
            assertEquals(1, queue.getInteger("running"));
            assertEquals(1, queue.getInteger("waiting"), "a task claimed ahead is counted waiting");
            assertEquals(1, queue.getInteger("claimedAhead"));

            assertEquals(
                    "cancelling",
                    node.post("/api/tasks/" + ahead + "/cancel", new JsonObject())
                            .bodyAsJsonObject()
                            .getString("state"),
                    "the journal has it running, so it is asked to stop");
            JsonObject cancelled = node.waitForState(ahead, "cancelled");
            assertEquals(List.of("submitted", "claimed", "cancel_requested", "cancelled"), reasons(cancelled));
            // Its handler never ran: the only gate call is the first task's.
            assertThrows(AssertionError.class, () -> GateHandler.next(Duration.ofMillis(300)));
            running.succeed(new JsonObject());
            node.waitForState(first, "succeeded");
            node.until(
                    "/api/queues",
                    q -> q.getJsonArray("queues").getJsonObject(0).getInteger("unfinished") == 0);
        }
    }

    @Test
    void a_drain_hands_back_tasks_claimed_ahead_at_once() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock();
        String ahead;
        try (TestNode node = TestNode.start(db, CONFIG, clock)) {
            warmUp(node);
            String first = submitGate(node);
            GateHandler.Call running = GateHandler.next(TestNode.WAIT);
            ahead = submitGate(node);
            node.waitForState(ahead, "running");

            var drained = node.node.shutdown(Duration.ofMillis(60_000));
            // Released before the running one ends, and without waiting for the grace.
            JsonObject released = node.waitForState(ahead, "pending");
            assertEquals(List.of("submitted", "claimed", "released"), reasons(released));
            assertEquals(0, released.getInteger("attempt"), "a release does not spend an attempt");
            running.succeed(new JsonObject());
            TestNode.await(drained);
            assertEquals("succeeded", node.getJson("/api/tasks/" + first).getString("state"));
        }
        // Same clock: no lease lapsed, yet the next node runs it at once.
        try (TestNode next = TestNode.start(db, CONFIG, clock)) {
            GateHandler.Call again = GateHandler.next(TestNode.WAIT);
            assertEquals(ahead, again.taskId().toString());
            again.succeed(new JsonObject());
            next.waitForState(ahead, "succeeded");
        }
    }

    /** No-op tasks teach the worker that handlers are short, so that it claims ahead. */
    private static void warmUp(TestNode node) throws Exception {
        for (int i = 0; i < 5; i++) {
            String id = node.post("/api/tasks", new JsonObject().put("type", "sleep"))
                    .bodyAsJsonObject()
                    .getString("id");
            node.waitForState(id, "succeeded");
        }
    }

    private static String submitGate(TestNode node) throws Exception {
        return node.post("/api/tasks", new JsonObject().put("type", "gate"))
                .bodyAsJsonObject()
                .getString("id");
    }
}
