package dev.taskline.control;

import static dev.taskline.testing.TestNode.await;
import static dev.taskline.testing.TestNode.queueIn;
import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.SseClient;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Deadlines over HTTP, against PostgreSQL, on a clock the test moves: a task that the backlog says
 * cannot start in time is refused up front and nothing is journaled; one accepted that then does
 * not start in time ends expired without its handler running; no claim takes it, swept or not.
 * The estimate's inputs are made exact: one slot, no claims ahead, and a pace learnt from a handler
 * that ran two seconds of the node's clock.
 */
class DeadlineTest {

    private static final String CONFIG = """
      {"queues": {"default": {"slots": 1, "claimAhead": 0, "leaseMs": 600000, "heartbeatMs": 200000},
                  "remote": {"remote": true, "slots": 1, "leaseMs": 600000, "heartbeatMs": 200000}}}
      """;

    @Test
    void a_task_the_backlog_cannot_start_by_its_deadline_is_refused_up_front_and_nothing_is_journaled()
            throws Exception {
        GateHandler.reset();
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            // The pace: one handler that ran 2 s on the node's clock, so one slot starts a task every 2 s.
            String warmUp = submit(node, gate());
            GateHandler.Call first = GateHandler.next(TestNode.WAIT);
            clock.advance(Duration.ofSeconds(2));
            first.succeed(new JsonObject());
            node.until("/api/queues", q -> queueIn(q, "default").getLong("finished") == 1);
            assertEquals("succeeded", node.getJson("/api/tasks/" + warmUp).getString("state"));

            submit(node, gate());
            GateHandler.next(TestNode.WAIT); // holds the only slot from here on
            submit(node, gate());
            submit(node, gate());
            node.until("/api/queues", q -> queueIn(q, "default").getInteger("waiting") == 2);

            // Two wait before it and the slot is taken: three slots must free, one every 2 s.
            Instant now = clock.instant();
            HttpResponse<Buffer> refused = node.post("/api/tasks", gate().put("startWithinMs", 1000));
            assertEquals(429, refused.statusCode(), refused.bodyAsString());
            assertEquals("application/problem+json", refused.getHeader("Content-Type"));
            assertEquals("5", refused.getHeader("Retry-After"), "missed by 5 s");
            JsonObject problem = refused.bodyAsJsonObject();
            assertTrue(problem.getString("type").endsWith("deadline-unmeetable"), problem::encode);
            assertEquals("default", problem.getString("queue"));
            assertEquals(micros(now.plusSeconds(1)), problem.getString("startBy"));
            assertEquals(micros(now.plusSeconds(6)), problem.getString("estimatedStartAt"));
            assertEquals(6000, problem.getLong("estimatedWaitMs"));
            assertEquals(false, problem.getBoolean("paused"));
            assertEquals(4, tasks(node).size(), "nothing of it was journaled");
            assertEquals(4, queueIn(node.getJson("/api/queues"), "default").getLong("accepted"));
            assertEquals(
                    1.0,
                    node.metric("taskline_tasks_rejected_total{queue=\"default\",reason=\"deadline_unmeetable\"}"));

            HttpResponse<Buffer> met = node.post("/api/tasks", gate().put("startWithinMs", 10_000));
            assertEquals(202, met.statusCode(), "6 s is within 10 s: " + met.bodyAsString());
            assertEquals(micros(now.plusSeconds(10)), met.bodyAsJsonObject().getString("startBy"));

            // A batch is refused whole: its second task waits behind the three and its own first.
            JsonObject batch =
                    new JsonObject().put("tasks", new JsonArray().add(gate()).add(gate().put("startWithinMs", 7000)));
            HttpResponse<Buffer> batchRefused = node.post("/api/batches", batch);
            assertEquals(429, batchRefused.statusCode(), batchRefused.bodyAsString());
            assertEquals(1, batchRefused.bodyAsJsonObject().getInteger("taskIndex"));
            assertEquals(10_000, batchRefused.bodyAsJsonObject().getLong("estimatedWaitMs"));
            assertEquals(5, tasks(node).size(), "neither task of the batch was journaled");

            // A high priority goes before the backlog: only the running task's slot must free.
            HttpResponse<Buffer> urgent =
                    node.post("/api/tasks", gate().put("priority", 5).put("startWithinMs", 2000));
            assertEquals(202, urgent.statusCode(), urgent.bodyAsString());
        }
    }

    @Test
    void a_paused_queue_refuses_a_task_with_a_deadline_due_now_and_takes_the_others() throws Exception {
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            node.post("/api/queues/default/pause", new JsonObject());
            HttpResponse<Buffer> refused = node.post("/api/tasks", sleep().put("startWithinMs", 3_600_000));
            assertEquals(429, refused.statusCode(), refused.bodyAsString());
            JsonObject problem = refused.bodyAsJsonObject();
            assertTrue(problem.getString("type").endsWith("deadline-unmeetable"), problem::encode);
            assertEquals(true, problem.getBoolean("paused"));
            assertNull(problem.getValue("estimatedStartAt"));
            assertEquals("5", refused.getHeader("Retry-After"));

            assertEquals(202, node.post("/api/tasks", sleep()).statusCode(), "no deadline: it waits for the resume");
            assertEquals(
                    202,
                    node.post("/api/tasks", sleep().put("delayMs", 60_000).put("startWithinMs", 1000))
                            .statusCode(),
                    "due later: not estimated");
            assertEquals(2, tasks(node).size());
        }
    }

    @Test
    void a_task_accepted_but_not_started_by_its_deadline_ends_expired_and_its_handler_never_runs() throws Exception {
        GateHandler.reset();
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            submit(node, gate());
            GateHandler.Call running = GateHandler.next(TestNode.WAIT);
            // Nothing has finished here yet: no evidence that it would miss, so it is taken.
            Instant submittedAt = clock.instant();
            JsonObject accepted =
                    node.post("/api/tasks", gate().put("startWithinMs", 5000)).bodyAsJsonObject();
            String late = accepted.getString("id");
            assertEquals("pending", accepted.getString("state"));
            assertEquals(micros(submittedAt.plusSeconds(5)), accepted.getString("startBy"));
            node.until("/api/queues", q -> queueIn(q, "default").getInteger("waiting") == 1);

            try (SseClient stream =
                    SseClient.open(node.vertx, node.node.httpPort(), "/api/tasks/" + late + "/events", null)) {
                assertEquals("snapshot", stream.next().event());
                clock.advance(Duration.ofSeconds(6));
                await(node.node.passes().deadlines().runOnce()); // or its timer did, a moment before
                JsonObject expired = node.waitForState(late, "expired");
                assertEquals(List.of("submitted", "expired"), reasons(expired));
                JsonObject event = expired.getJsonArray("history").getJsonObject(1);
                assertEquals("pending", event.getString("from"));
                assertEquals("expired", event.getString("to"));
                assertEquals(micros(clock.instant()), expired.getString("finishedAt"));
                assertNull(expired.getValue("startedAt"));
                assertEquals(0, expired.getInteger("attempt"));
                assertEquals(micros(submittedAt.plusSeconds(5)), expired.getString("startBy"));

                List<SseClient.Event> events = stream.untilEnd();
                assertTrue(
                        events.stream()
                                .anyMatch(e -> e.event().equals("state")
                                        && "expired".equals(e.data().getString("to"))
                                        && "expired".equals(e.data().getString("reason"))),
                        events::toString);
            }
            assertEquals(1.0, node.metric("taskline_tasks_expired_total{queue=\"default\"}"));
            JsonObject queue = queueIn(node.getJson("/api/queues"), "default");
            assertEquals(0, queue.getInteger("waiting"));
            assertEquals(1, queue.getLong("expired"));
            assertEquals(queue.getLong("accepted") - queue.getLong("finished"), queue.getLong("unfinished"));
            JsonArray listed = node.getJson("/api/tasks?state=expired").getJsonArray("tasks");
            assertEquals(
                    List.of(late),
                    listed.stream().map(t -> ((JsonObject) t).getString("id")).toList());

            // Its handler never ran: once the slot frees, the next task to start is one submitted after it.
            running.succeed(new JsonObject());
            String next = submit(node, gate());
            GateHandler.Call after = GateHandler.next(TestNode.WAIT);
            assertEquals(next, after.taskId().toString());

            // Retried by hand, it runs, its deadline gone.
            after.succeed(new JsonObject());
            assertEquals(
                    202,
                    node.post("/api/tasks/" + late + "/retry", new JsonObject()).statusCode());
            GateHandler.Call retried = GateHandler.next(TestNode.WAIT);
            assertEquals(late, retried.taskId().toString());
            retried.succeed(new JsonObject());
            JsonObject done = node.waitForState(late, "succeeded");
            assertFalse(done.containsKey("startBy"));
            assertEquals(List.of("submitted", "expired", "retried", "claimed", "succeeded"), reasons(done));
        }
    }

    @Test
    void a_flow_whose_last_task_expires_ends_failed() throws Exception {
        GateHandler.reset();
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            submit(node, gate());
            GateHandler.Call running = GateHandler.next(TestNode.WAIT);
            JsonObject flow = new JsonObject()
                    .put("tasks", new JsonArray().add(gate().put("key", "late").put("startWithinMs", 5000)));
            HttpResponse<Buffer> accepted = node.post("/api/flows", flow);
            assertEquals(202, accepted.statusCode(), accepted.bodyAsString());
            String flowId = accepted.bodyAsJsonObject().getString("flowId");

            clock.advance(Duration.ofSeconds(6));
            await(node.node.passes().deadlines().runOnce());
            JsonObject ended = node.waitForFlow(flowId, f -> !"running".equals(f.getString("state")), "its end");
            assertEquals("failed", ended.getString("state"), ended::encode);
            assertEquals("expired", ended.getJsonArray("tasks").getJsonObject(0).getString("state"), ended::encode);
            running.succeed(new JsonObject());
        }
    }

    @Test
    void no_claim_takes_a_task_past_its_deadline_whether_or_not_the_sweep_came_first() throws Exception {
        GateHandler.reset();
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            submit(node, gate());
            GateHandler.Call running = GateHandler.next(TestNode.WAIT);
            String local = submit(node, gate().put("startWithinMs", 5000));
            String remote = submit(
                    node,
                    new JsonObject()
                            .put("type", "resize")
                            .put("queue", "remote")
                            .put("startWithinMs", 5000));
            node.until(
                    "/api/queues",
                    q -> queueIn(q, "default").getInteger("waiting") == 1
                            && queueIn(q, "remote").getInteger("waiting") == 1);
            clock.advance(Duration.ofSeconds(6));

            // A remote worker asks for it: nothing, whether the claim was refused or the sweep took it first.
            HttpResponse<Buffer> claim = node.post(
                    "/api/queues/remote/claim",
                    new JsonObject().put("worker", "w1").put("max", 10).put("waitMs", 0));
            assertEquals(200, claim.statusCode(), claim.bodyAsString());
            assertEquals(0, claim.bodyAsJsonObject().getJsonArray("tasks").size(), claim.bodyAsString());

            // The local worker's slot frees: it does not start the late task either.
            running.succeed(new JsonObject());
            String next = submit(node, gate());
            assertEquals(next, GateHandler.next(TestNode.WAIT).taskId().toString());

            await(node.node.passes().deadlines().runOnce());
            node.waitForState(local, "expired");
            node.waitForState(remote, "expired");
        }
    }

    @Test
    void a_deadline_that_breaks_a_rule_is_refused_with_422_and_nothing_is_journaled() throws Exception {
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            Instant now = clock.instant();
            assertInvalid(
                    node,
                    sleep().put("startBy", now.plusSeconds(60).toString()).put("startWithinMs", 1000),
                    "give startBy or startWithinMs, not both");
            assertInvalid(node, sleep().put("startWithinMs", 0), "startWithinMs must be from 1");
            assertInvalid(node, sleep().put("startWithinMs", -5), "startWithinMs must be from 1");
            assertInvalid(node, sleep().put("startWithinMs", 1.5), "startWithinMs must be an integer");
            assertInvalid(node, sleep().put("startWithinMs", "100"), "startWithinMs must be an integer");
            assertInvalid(node, sleep().put("startBy", "tomorrow"), "startBy must be an ISO-8601 instant");
            assertInvalid(node, sleep().put("startBy", 1_700_000_000), "startBy must be an ISO-8601 instant");
            assertInvalid(
                    node, sleep().put("startBy", now.minusSeconds(1).toString()), "startBy must be in the future");
            assertInvalid(node, sleep().put("startBy", now.toString()), "startBy must be in the future");
            assertInvalid(
                    node,
                    sleep().put(
                                    "startBy",
                                    now.plus(java.time.Duration.ofDays(366)).toString()),
                    "startBy must be at most");
            assertInvalid(node, sleep().put("startBy", "+100000000-01-01T00:00:00Z"), "startBy must be at most");
            assertInvalid(
                    node,
                    sleep().put("runAt", now.plusSeconds(60).toString())
                            .put("startBy", now.plusSeconds(30).toString()),
                    "startBy must not be before the task is due");

            JsonObject batch = new JsonObject()
                    .put(
                            "tasks",
                            new JsonArray()
                                    .add(sleep())
                                    .add(sleep().put(
                                                    "startBy",
                                                    now.minusSeconds(1).toString())));
            HttpResponse<Buffer> answer = node.post("/api/batches", batch);
            assertEquals(422, answer.statusCode(), answer.bodyAsString());
            assertTrue(
                    answer.bodyAsJsonObject().getString("detail").startsWith("tasks[1].startBy must be in the future"),
                    answer.bodyAsString());

            assertEquals(0, tasks(node).size(), "nothing was journaled");
            assertEquals(
                    202,
                    node.post(
                                    "/api/tasks",
                                    sleep().put("startBy", now.plusMillis(1).toString()))
                            .statusCode(),
                    "a deadline a millisecond ahead on an idle queue is fine");
        }
    }

    private static void assertInvalid(TestNode node, JsonObject body, String detail) throws Exception {
        HttpResponse<Buffer> answer = node.post("/api/tasks", body);
        assertEquals(422, answer.statusCode(), body.encode() + " -> " + answer.bodyAsString());
        JsonObject problem = answer.bodyAsJsonObject();
        assertTrue(problem.getString("type").endsWith("invalid-task"), problem::encode);
        assertTrue(problem.getString("detail").contains(detail), body.encode() + " -> " + problem.getString("detail"));
    }

    /** An instant as the journal keeps it (to the microsecond) and the API then shows it. */
    private static String micros(Instant instant) {
        return instant.truncatedTo(ChronoUnit.MICROS).toString();
    }

    private static JsonObject gate() {
        return new JsonObject().put("type", "gate");
    }

    private static JsonObject sleep() {
        return new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0));
    }

    private static String submit(TestNode node, JsonObject task) throws Exception {
        HttpResponse<Buffer> answer = node.post("/api/tasks", task);
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }

    private static JsonArray tasks(TestNode node) throws Exception {
        return node.getJson("/api/tasks?limit=100").getJsonArray("tasks");
    }
}
