package dev.taskline.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * A full queue says 429 with Retry-After and journals nothing of the refused submission. The one
 * slot is held by a gate task, so the number of waiting tasks is known at every step.
 */
class BackpressureTest {

    private static final int CAPACITY = 5;
    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        GateHandler.reset();
        node = TestNode.start(
                TestPostgres.newDatabase(),
                "{\"queues\": {\"default\": {\"slots\": 1, \"capacity\": " + CAPACITY + "}}}");
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    @Test
    void a_full_queue_answers_429_and_journals_nothing_of_the_refused_batch() throws Exception {
        // Six gate tasks: one runs (holding the only slot), five wait: the queue is exactly full.
        HttpResponse<Buffer> first = node.post("/api/batches", batch(1));
        assertEquals(202, first.statusCode(), first.bodyAsString());
        GateHandler.Call running = GateHandler.next(TestNode.WAIT);
        node.until("/api/queues", q -> queue(q).getInteger("running") == 1);
        HttpResponse<Buffer> fill = node.post("/api/batches", batch(CAPACITY));
        assertEquals(202, fill.statusCode(), fill.bodyAsString());

        double refusalsBefore = node.metric("taskline_refusal_latency_seconds_count");
        HttpResponse<Buffer> refused = node.post("/api/batches", batch(2));
        assertEquals(429, refused.statusCode());
        assertEquals("application/problem+json", refused.getHeader("Content-Type"));
        long retryAfter = Long.parseLong(refused.getHeader("Retry-After"));
        assertTrue(retryAfter >= 1 && retryAfter <= 300, "Retry-After " + retryAfter);
        JsonObject problem = refused.bodyAsJsonObject();
        assertEquals(429, problem.getInteger("status"));
        assertEquals("default", problem.getString("queue"));
        assertEquals(CAPACITY, problem.getInteger("capacity"));
        assertEquals(CAPACITY, problem.getInteger("backlog"));
        assertEquals(retryAfter, problem.getLong("retryAfterSeconds"));

        HttpResponse<Buffer> single = node.post("/api/tasks", gate());
        assertEquals(429, single.statusCode(), "a single task does not fit either");
        assertEquals(
                refusalsBefore + 2, node.metric("taskline_refusal_latency_seconds_count"), "both refusals were timed");

        JsonArray journaled = node.getJson("/api/tasks?limit=1000").getJsonArray("tasks");
        assertEquals(1 + CAPACITY, journaled.size(), "nothing of the refused submissions was journaled");
        JsonObject queue = queue(node.getJson("/api/queues"));
        assertEquals(CAPACITY, queue.getInteger("waiting"));
        assertEquals(1 + CAPACITY, queue.getInteger("accepted"));
        assertEquals(3, queue.getInteger("rejected"));

        // Once the running task ends, one place frees and exactly one more task fits.
        running.succeed(new JsonObject());
        GateHandler.Call next = GateHandler.next(TestNode.WAIT);
        node.until("/api/queues", q -> queue(q).getInteger("waiting") == CAPACITY - 1);
        assertEquals(202, node.post("/api/tasks", gate()).statusCode());
        assertEquals(429, node.post("/api/tasks", gate()).statusCode());

        // Drain everything so that the node closes idle.
        next.succeed(new JsonObject());
        for (int i = 0; i < CAPACITY; i++) {
            GateHandler.next(TestNode.WAIT).succeed(new JsonObject());
        }
        node.until("/api/queues", q -> queue(q).getInteger("finished") == 2 + CAPACITY);
    }

    @Test
    void retry_after_is_the_time_to_work_off_the_backlog_at_the_recent_completion_rate() throws Exception {
        // A node of its own: one slot, capacity 4, and a clock that stands still, so that every
        // completion falls into the same 10 s rate window. No claims ahead: the queue is emptied by
        // cancelling its pending tasks, and a task claimed ahead is running in the journal.
        try (TestNode own = TestNode.start(
                TestPostgres.newDatabase(),
                "{\"queues\": {\"default\": {\"slots\": 1, \"capacity\": 4, \"claimAhead\": 0}}}")) {
            assertEquals(5, retryAfterWhenFull(own, 0), "nothing finished lately: the fallback");
            assertEquals(4, retryAfterWhenFull(own, 10), "10 done in 10 s: 1/s, a backlog of 4 takes 4 s");
            assertEquals(1, retryAfterWhenFull(own, 30), "40 done in 10 s: 4/s, 1 s");
        }
    }

    /** Finishes {@code n} more no-op tasks, fills the queue behind a gate, and reads the hint of a 429. */
    private static long retryAfterWhenFull(TestNode own, int n) throws Exception {
        for (int i = 0; i < n; i++) {
            String id = own.post("/api/tasks", new JsonObject().put("type", "sleep"))
                    .bodyAsJsonObject()
                    .getString("id");
            own.waitForState(id, "succeeded");
        }
        own.post("/api/tasks", gate());
        GateHandler.Call holding = GateHandler.next(TestNode.WAIT);
        own.until("/api/queues", q -> queue(q).getInteger("running") == 1);
        for (int i = 0; i < 4; i++) {
            assertEquals(202, own.post("/api/tasks", gate()).statusCode());
        }
        HttpResponse<Buffer> refused = own.post("/api/tasks", gate());
        assertEquals(429, refused.statusCode());
        long retryAfter = Long.parseLong(refused.getHeader("Retry-After"));
        // Empty the queue again without counting completions: cancel the waiting ones.
        for (Object t : own.getJson("/api/tasks?state=pending").getJsonArray("tasks")) {
            own.post("/api/tasks/" + ((JsonObject) t).getString("id") + "/cancel", new JsonObject());
        }
        own.post("/api/tasks/" + holding.taskId() + "/cancel", new JsonObject());
        holding.fail("cancelled");
        own.until("/api/queues", q -> queue(q).getInteger("running") == 0);
        return retryAfter;
    }

    private static JsonObject gate() {
        return new JsonObject().put("type", "gate");
    }

    private static JsonObject batch(int n) {
        List<JsonObject> tasks = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            tasks.add(gate());
        }
        return new JsonObject().put("tasks", new JsonArray(new ArrayList<>(tasks)));
    }

    private static JsonObject queue(JsonObject queues) {
        return TestNode.queueIn(queues, "default");
    }
}
