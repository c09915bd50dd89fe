package dev.taskline.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.StepsProbeHandler;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Durable steps of Java handlers, over HTTP on a real journal: steps journaled once and passed over
 * by later runs, sleeps and waits that end the attempt suspended (pending, no slot, no attempt
 * spent) and resume when their time comes on the node's clock, signals buffered until a wait takes
 * them, and the order saga with its compensation.
 */
class DurableStepsTest {

    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), """
                {"queues": {"default": {"slots": 4, "backoffBaseMs": 1, "backoffCapMs": 1}}}
                """, new dev.taskline.testing.MutableClock(), () -> 0.0);
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    static String submit(TestNode node, JsonObject task) throws Exception {
        HttpResponse<Buffer> answer = node.post("/api/tasks", task);
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }

    static JsonObject probe(JsonArray ops) {
        return new JsonObject().put("type", "steps-probe").put("payload", new JsonObject().put("ops", ops));
    }

    static JsonObject waiting(TestNode node, String id) throws Exception {
        return node.waitForTask(
                id, t -> "pending".equals(t.getString("state")) && t.getValue("wait") != null, "a wait");
    }

    static List<String> stepNames(JsonObject task) {
        return task.getJsonArray("steps").stream()
                .map(s -> ((JsonObject) s).getString("name"))
                .toList();
    }

    @Test
    void a_step_done_is_not_run_again_by_the_retry_of_a_later_step_that_failed() throws Exception {
        String id = submit(
                node,
                probe(new JsonArray()
                                .add(new JsonObject().put("step", "a"))
                                .add(new JsonObject().put("step", "b").put("failTimes", 1))
                                .add(new JsonObject().put("step", "c")))
                        .put("maxAttempts", 3));
        JsonObject task = node.waitForState(id, "succeeded");
        assertEquals(1, StepsProbeHandler.runs(id, "a"));
        assertEquals(2, StepsProbeHandler.runs(id, "b"), "the failed step runs again");
        assertEquals(1, StepsProbeHandler.runs(id, "c"));
        assertEquals(2, task.getInteger("attempt"));
        assertEquals(List.of("a", "b", "c"), stepNames(task));
        JsonObject results = task.getJsonObject("result").getJsonObject("results");
        assertEquals(1, results.getJsonObject("a").getInteger("attempt"), "a's result is the first run's");
        assertEquals(2, results.getJsonObject("b").getInteger("attempt"));
        assertEquals(2, task.getJsonArray("steps").getJsonObject(1).getInteger("attempt"));
        assertTrue(TestNode.reasons(task).contains("step_completed"));
    }

    @Test
    void a_sleep_suspends_without_a_slot_or_an_attempt_and_resumes_when_the_clock_reaches_its_end() throws Exception {
        String id = submit(
                node,
                probe(new JsonArray()
                        .add(new JsonObject().put("step", "before"))
                        .add(new JsonObject()
                                .put("sleep", "a-while")
                                .put("ms", Duration.ofHours(2).toMillis()))
                        .add(new JsonObject().put("step", "after"))));
        JsonObject asleep = waiting(node, id);
        assertEquals("sleep", asleep.getJsonObject("wait").getString("kind"));
        assertEquals("a-while", asleep.getJsonObject("wait").getString("step"));
        assertEquals(List.of("before"), stepNames(asleep));
        assertEquals(0, StepsProbeHandler.runs(id, "after"));

        // Moved no further than other tests move theirs: task ids of the JVM follow the furthest clock.
        assertEquals(0, node.wake(Duration.ofMinutes(119)), "not yet");
        assertEquals("pending", node.getJson("/api/tasks/" + id).getString("state"));
        node.wake(Duration.ofMinutes(1));
        JsonObject done = node.waitForState(id, "succeeded");
        assertEquals(1, StepsProbeHandler.runs(id, "before"));
        assertEquals(1, StepsProbeHandler.runs(id, "after"));
        assertEquals(1, done.getInteger("attempt"), "a sleep spends no attempt");
        assertEquals(List.of("before", "a-while", "after"), stepNames(done));
        List<String> reasons = TestNode.reasons(done);
        assertTrue(reasons.containsAll(List.of("suspended", "resumed")), reasons::toString);
        assertNull(done.getValue("wait"));
        assertTrue(node.metric("taskline_tasks_suspended_total{kind=\"sleep\"}") >= 1);
        assertTrue(node.metric("taskline_steps_completed_total") >= 2);
        assertTrue(node.metric("taskline_wake_lateness_seconds_count") >= 1);
    }

    @Test
    void a_signal_sent_to_a_waiting_task_wakes_it_with_its_payload() throws Exception {
        String id = submit(
                node,
                probe(new JsonArray().add(new JsonObject().put("signal", "go").put("timeoutMs", 600_000))));
        JsonObject waiting = waiting(node, id);
        assertEquals("signal", waiting.getJsonObject("wait").getString("kind"));
        assertEquals("go", waiting.getJsonObject("wait").getString("name"));

        HttpResponse<Buffer> sent = node.post(
                "/api/tasks/" + id + "/signals/go", new JsonObject().put("payload", new JsonObject().put("n", 7)));
        assertEquals(202, sent.statusCode(), sent.bodyAsString());
        assertTrue(sent.bodyAsJsonObject().getBoolean("woke"));
        assertTrue(node.metric("taskline_signals_total") >= 1);
        JsonObject done = node.waitForState(id, "succeeded");
        assertEquals(
                7,
                done.getJsonObject("result")
                        .getJsonObject("results")
                        .getJsonObject("go")
                        .getInteger("n"));
        assertEquals(
                "go",
                done.getJsonArray("steps")
                        .getJsonObject(0)
                        .getJsonObject("result")
                        .getString("signal"));
    }

    @Test
    void signals_sent_before_the_waits_are_kept_and_taken_one_per_wait_in_order() throws Exception {
        String id = submit(
                node,
                probe(new JsonArray()
                        .add(new JsonObject().put("sleep", "first").put("ms", 60_000))
                        .add(new JsonObject().put("signal", "go").put("step", "go-1"))
                        .add(new JsonObject().put("signal", "go").put("step", "go-2"))));
        waiting(node, id);
        for (int n = 1; n <= 2; n++) {
            HttpResponse<Buffer> sent = node.post(
                    "/api/tasks/" + id + "/signals/go", new JsonObject().put("payload", new JsonObject().put("n", n)));
            assertEquals(202, sent.statusCode(), sent.bodyAsString());
            assertFalse(sent.bodyAsJsonObject().getBoolean("woke"), "it sleeps; it does not wait for go yet");
        }
        assertEquals(2, node.getJson("/api/tasks/" + id).getJsonArray("signals").size(), "both kept");
        node.wake(Duration.ofMinutes(1));
        JsonObject results =
                node.waitForState(id, "succeeded").getJsonObject("result").getJsonObject("results");
        assertEquals(1, results.getJsonObject("go-1").getInteger("n"));
        assertEquals(2, results.getJsonObject("go-2").getInteger("n"));
        assertEquals(0, node.getJson("/api/tasks/" + id).getJsonArray("signals").size(), "both taken");
    }

    @Test
    void a_wait_whose_timeout_passes_on_the_nodes_clock_returns_empty() throws Exception {
        String id = submit(
                node,
                probe(new JsonArray()
                        .add(new JsonObject().put("signal", "go").put("timeoutMs", 30 * 60_000))
                        .add(new JsonObject().put("step", "after"))));
        waiting(node, id);
        node.wake(Duration.ofMinutes(30));
        JsonObject done = node.waitForState(id, "succeeded");
        JsonObject results = done.getJsonObject("result").getJsonObject("results");
        assertTrue(results.containsKey("go") && results.getValue("go") == null, results::encode);
        assertTrue(done.getJsonArray("steps")
                .getJsonObject(0)
                .getJsonObject("result")
                .getBoolean("timedOut"));
        // A signal after the timeout finds the task ended.
        assertEquals(
                409,
                node.post("/api/tasks/" + id + "/signals/go", new JsonObject()).statusCode());
    }

    @Test
    void a_signal_with_an_idempotency_key_sent_twice_is_one_signal() throws Exception {
        String id = submit(
                node,
                probe(new JsonArray()
                        .add(new JsonObject().put("sleep", "first").put("ms", 60_000))
                        .add(new JsonObject().put("signal", "go").put("step", "go-1"))
                        .add(new JsonObject()
                                .put("signal", "go")
                                .put("step", "go-2")
                                .put("timeoutMs", 1_000))));
        waiting(node, id);
        String first = null;
        for (int i = 0; i < 2; i++) {
            HttpResponse<Buffer> sent = TestNode.await(node.http
                    .post("/api/tasks/" + id + "/signals/go")
                    .putHeader("Idempotency-Key", "pay-1")
                    .sendJsonObject(new JsonObject().put("payload", new JsonObject().put("i", i))));
            assertEquals(202, sent.statusCode(), sent.bodyAsString());
            String signal = sent.bodyAsJsonObject().getString("id");
            if (first == null) {
                first = signal;
            }
            assertEquals(first, signal, "the repeat answers the first signal's id");
        }
        assertEquals(1, node.getJson("/api/tasks/" + id).getJsonArray("signals").size());
        node.wake(Duration.ofMinutes(1));
        waiting(node, id);
        node.wake(Duration.ofSeconds(1));
        JsonObject results =
                node.waitForState(id, "succeeded").getJsonObject("result").getJsonObject("results");
        assertEquals(0, results.getJsonObject("go-1").getInteger("i"));
        assertNull(results.getValue("go-2"), "no second signal: the second wait timed out");
    }

    @Test
    void signals_to_unknown_tasks_and_bad_signals_are_refused_and_change_nothing() throws Exception {
        assertEquals(
                404,
                node.post("/api/tasks/01a23b41-0000-7000-8000-000000000000/signals/go", new JsonObject())
                        .statusCode());
        assertEquals(
                404,
                node.post("/api/tasks/not-an-id/signals/go", new JsonObject()).statusCode());
        String id = submit(node, probe(new JsonArray().add(new JsonObject().put("signal", "go"))));
        waiting(node, id);
        assertEquals(
                422,
                node.post("/api/tasks/" + id + "/signals/go", new JsonObject().put("payload", new JsonArray()))
                        .statusCode());
        assertEquals(
                422,
                node.post("/api/tasks/" + id + "/signals/go", new JsonObject().put("other", 1))
                        .statusCode());
        assertEquals(
                422,
                node.post("/api/tasks/" + id + "/signals/" + "x".repeat(201), new JsonObject())
                        .statusCode());
        assertEquals(0, node.getJson("/api/tasks/" + id).getJsonArray("signals").size());
        assertEquals(
                202,
                node.post("/api/tasks/" + id + "/signals/go", new JsonObject()).statusCode());
        node.waitForState(id, "succeeded");
    }

    @Test
    void an_order_is_reserved_paid_charged_shipped_and_mailed_once_each() throws Exception {
        String id = submit(
                node, new JsonObject().put("type", "order").put("payload", new JsonObject().put("orderId", "o-1")));
        JsonObject waiting = waiting(node, id);
        assertEquals("payment", waiting.getJsonObject("wait").getString("name"));
        assertEquals(
                202,
                node.post(
                                "/api/tasks/" + id + "/signals/payment",
                                new JsonObject().put("payload", new JsonObject().put("paid", true)))
                        .statusCode());
        JsonObject done = node.waitForState(id, "succeeded");
        assertEquals("shipped", done.getJsonObject("result").getString("status"));
        assertEquals(List.of("reserve", "payment", "charge", "ship", "email"), stepNames(done));
        assertEquals(
                id + ":charge",
                done.getJsonObject("result").getJsonObject("charge").getString("idempotencyKey"));
    }

    @Test
    void an_order_whose_payment_does_not_come_in_time_releases_its_stock_and_fails() throws Exception {
        String id = submit(
                node, new JsonObject().put("type", "order").put("payload", new JsonObject().put("orderId", "o-2")));
        waiting(node, id);
        node.wake(Duration.ofMinutes(30));
        JsonObject failed = node.waitForState(id, "failed");
        assertEquals(List.of("reserve", "payment", "release"), stepNames(failed));
        assertTrue(failed.getJsonObject("error").getString("message").contains("not confirmed in time"));
    }

    @Test
    void a_compensating_cancel_of_a_waiting_order_releases_its_stock_and_ends_it_cancelled() throws Exception {
        String id = submit(
                node, new JsonObject().put("type", "order").put("payload", new JsonObject().put("orderId", "o-3")));
        waiting(node, id);
        HttpResponse<Buffer> cancel =
                node.post("/api/tasks/" + id + "/cancel", new JsonObject().put("compensate", true));
        assertEquals(202, cancel.statusCode(), cancel.bodyAsString());
        assertEquals("compensating", cancel.bodyAsJsonObject().getString("state"));
        JsonObject done = node.waitForState(id, "cancelled");
        assertEquals(List.of("reserve", "release"), stepNames(done));
        assertEquals("compensated", done.getJsonObject("result").getString("status"));
        assertTrue(TestNode.reasons(done).contains("compensate_requested"));
    }

    @Test
    void a_plain_cancel_of_a_suspended_task_ends_it_at_once() throws Exception {
        String id = submit(
                node, new JsonObject().put("type", "order").put("payload", new JsonObject().put("orderId", "o-4")));
        waiting(node, id);
        HttpResponse<Buffer> cancel = node.post("/api/tasks/" + id + "/cancel", "application/json", Buffer.buffer());
        assertEquals(202, cancel.statusCode(), cancel.bodyAsString());
        JsonObject done = node.waitForState(id, "cancelled");
        assertEquals(List.of("reserve"), stepNames(done), "nothing undone: no compensation was asked");
    }

    @Test
    void a_compensating_cancel_of_a_task_that_ran_no_step_is_a_plain_cancel() throws Exception {
        String id = submit(
                node,
                probe(new JsonArray().add(new JsonObject().put("step", "a"))).put("delayMs", 3_600_000));
        HttpResponse<Buffer> cancel =
                node.post("/api/tasks/" + id + "/cancel", new JsonObject().put("compensate", true));
        assertEquals(202, cancel.statusCode(), cancel.bodyAsString());
        assertEquals("cancelled", cancel.bodyAsJsonObject().getString("state"));
        assertEquals(
                422,
                node.post("/api/tasks/" + id + "/cancel", new JsonObject().put("compensate", 1))
                        .statusCode());
    }
}
