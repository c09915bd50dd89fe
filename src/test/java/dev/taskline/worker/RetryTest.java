package dev.taskline.worker;

import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.handler.PermanentTaskException;
import dev.taskline.handler.SnoozeException;
import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Retries, backoff, dead letters, permanent errors, snoozes and timeouts. The clock is moved by
 * hand and the jitter fixed at its maximum, so every backoff delay is exact.
 */
class RetryTest {

    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), """
        {"queues": {"default": {"slots": 2, "maxAttempts": 3, "backoffBaseMs": 1000, "backoffCapMs": 60000}}}
        """, new MutableClock(), () -> 1.0);
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    @BeforeEach
    void reset() {
        GateHandler.reset();
    }

    @Test
    void a_task_that_fails_twice_then_succeeds_shows_three_attempts_with_growing_delays() throws Exception {
        String id = node.post(
                        "/api/tasks",
                        new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("failTimes", 2)))
                .bodyAsJsonObject()
                .getString("id");

        node.waitForTask(
                id, t -> t.getInteger("attempt") == 1 && t.getString("state").equals("pending"), "a retry");
        assertEquals(0, node.advance(Duration.ofMillis(999)), "not due before its backoff");
        node.advance(Duration.ofMillis(1));
        node.waitForTask(
                id, t -> t.getInteger("attempt") == 2 && t.getString("state").equals("pending"), "a retry");
        assertEquals(0, node.advance(Duration.ofMillis(1999)));
        node.advance(Duration.ofMillis(1));
        JsonObject done = node.waitForState(id, "succeeded");

        assertEquals(3, done.getInteger("attempt"));
        JsonArray history = done.getJsonArray("history");
        assertEquals(
                List.of(
                        "submitted",
                        "claimed",
                        "retry_scheduled",
                        "claimed",
                        "retry_scheduled",
                        "claimed",
                        "succeeded"),
                reasons(done));
        long firstDelay = delayOf(history.getJsonObject(2));
        long secondDelay = delayOf(history.getJsonObject(4));
        assertEquals(1000, firstDelay);
        assertEquals(2000, secondDelay);
        assertEquals(
                "planned failure 1 of 2",
                history.getJsonObject(2).getJsonObject("detail").getString("message"));
    }

    @Test
    void a_task_that_always_fails_ends_failed_and_can_be_retried_by_hand() throws Exception {
        String id = node.post(
                        "/api/tasks",
                        new JsonObject()
                                .put("type", "sleep")
                                .put("maxAttempts", 2)
                                .put("payload", new JsonObject().put("failTimes", 100)))
                .bodyAsJsonObject()
                .getString("id");
        node.waitForTask(
                id, t -> t.getInteger("attempt") == 1 && t.getString("state").equals("pending"), "a retry");
        node.advance(Duration.ofSeconds(1));
        JsonObject failed = node.waitForState(id, "failed");
        assertEquals(2, failed.getInteger("attempt"));
        assertEquals("planned failure 2 of 100", failed.getJsonObject("error").getString("message"));

        JsonArray deadLetters =
                node.getJson("/api/tasks?state=failed&limit=1000").getJsonArray("tasks");
        assertTrue(deadLetters.stream()
                .anyMatch(t -> ((JsonObject) t).getString("id").equals(id)));

        assertEquals(
                202, node.post("/api/tasks/" + id + "/retry", new JsonObject()).statusCode());
        JsonObject again =
                node.waitForTask(id, t -> reasons(t).contains("retried") && t.getInteger("attempt") >= 1, "the retry");
        assertTrue(again.getJsonArray("history").stream()
                .map(e -> (JsonObject) e)
                .anyMatch(e -> e.getString("reason").equals("retried")
                        && e.getString("from").equals("failed")));
        assertEquals(
                409,
                node.post("/api/tasks/" + id + "/retry", new JsonObject()).statusCode(),
                "a task that is not failed or cancelled cannot be retried");
        assertEquals(
                404,
                node.post("/api/tasks/" + java.util.UUID.randomUUID() + "/retry", new JsonObject())
                        .statusCode());
    }

    @Test
    void a_bulk_retry_takes_a_bounded_number_of_dead_letters() throws Exception {
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < 3; i++) {
            tasks.add(new JsonObject()
                    .put("type", "sleep")
                    .put("maxAttempts", 1)
                    .put("payload", new JsonObject().put("failTimes", 1)));
        }
        JsonArray accepted = node.post("/api/batches", new JsonObject().put("tasks", tasks))
                .bodyAsJsonObject()
                .getJsonArray("tasks");
        String batch = node.waitForState(accepted.getJsonObject(2).getString("id"), "failed")
                .getString("batchId");
        node.waitForBatch(batch, b -> b.getJsonObject("counts").getInteger("failed") == 3, "three failed");

        JsonObject retried = node.post(
                        "/api/tasks/retry",
                        new JsonObject()
                                .put("queue", "default")
                                .put("type", "sleep")
                                .put("limit", 2))
                .bodyAsJsonObject();
        assertEquals(2, retried.getInteger("retried"));
        assertEquals(
                422,
                node.post("/api/tasks/retry", new JsonObject().put("limit", 5000))
                        .statusCode());
    }

    @Test
    void a_permanent_error_fails_the_task_without_retrying() throws Exception {
        String id = node.post("/api/tasks", new JsonObject().put("type", "gate"))
                .bodyAsJsonObject()
                .getString("id");
        GateHandler.next(TestNode.WAIT).fail(new PermanentTaskException("the customer does not exist"));
        JsonObject failed = node.waitForState(id, "failed");
        assertEquals(1, failed.getInteger("attempt"));
        assertEquals(List.of("submitted", "claimed", "failed_permanently"), reasons(failed));
    }

    @Test
    void a_snooze_runs_again_later_without_spending_an_attempt() throws Exception {
        String id = node.post("/api/tasks", new JsonObject().put("type", "gate"))
                .bodyAsJsonObject()
                .getString("id");
        GateHandler.Call first = GateHandler.next(TestNode.WAIT);
        assertEquals(1, first.attempt());
        first.fail(new SnoozeException(Duration.ofSeconds(30)));
        node.waitForTask(id, t -> t.getString("state").equals("pending") && t.getInteger("attempt") == 0, "the snooze");
        node.advance(Duration.ofSeconds(30));
        GateHandler.Call second = GateHandler.next(TestNode.WAIT);
        assertEquals(1, second.attempt(), "the snoozed attempt did not count");
        second.succeed(new JsonObject());
        JsonObject done = node.waitForState(id, "succeeded");
        assertEquals(List.of("submitted", "claimed", "snoozed", "claimed", "succeeded"), reasons(done));
    }

    @Test
    void a_task_over_its_timeout_frees_its_slot_and_its_late_result_is_refused() throws Exception {
        // Two slots: fill one with a gate that stays, time out the other.
        String keeper = node.post("/api/tasks", new JsonObject().put("type", "gate"))
                .bodyAsJsonObject()
                .getString("id");
        GateHandler.Call keeperCall = GateHandler.next(TestNode.WAIT);
        String slow = node.post(
                        "/api/tasks",
                        new JsonObject()
                                .put("type", "gate")
                                .put("timeoutMs", 200)
                                .put("maxAttempts", 1))
                .bodyAsJsonObject()
                .getString("id");
        GateHandler.Call slowCall = GateHandler.next(TestNode.WAIT);
        JsonObject failed = node.waitForState(slow, "failed");
        assertEquals("timeout", failed.getJsonObject("error").getString("type"));
        assertTrue(slowCall.cancelled(), "the handler was told to stop");

        // The slot is free although the handler never returned: another task starts at once.
        String next = node.post("/api/tasks", new JsonObject().put("type", "gate"))
                .bodyAsJsonObject()
                .getString("id");
        GateHandler.Call nextCall = GateHandler.next(TestNode.WAIT);
        assertEquals(next, nextCall.taskId().toString());

        slowCall.succeed(new JsonObject().put("late", true));
        nextCall.succeed(new JsonObject());
        node.waitForState(next, "succeeded");
        JsonObject still = node.getJson("/api/tasks/" + slow);
        assertEquals("failed", still.getString("state"));
        assertNull(still.getValue("result"), "the late result never landed");
        keeperCall.succeed(new JsonObject());
        node.waitForState(keeper, "succeeded");
    }

    private static long delayOf(JsonObject retryEvent) {
        Instant at = Instant.parse(retryEvent.getString("at"));
        Instant runAt = java.time.OffsetDateTime.parse(
                        retryEvent.getJsonObject("detail").getString("runAt"))
                .toInstant();
        return Duration.between(at, runAt).toMillis();
    }
}
