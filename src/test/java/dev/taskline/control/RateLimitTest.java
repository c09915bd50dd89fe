package dev.taskline.control;

import static dev.taskline.testing.TestNode.queueIn;
import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Rate limits over HTTP, two nodes on one PostgreSQL with one injected clock: the journal counts
 * every node's starts, so a window never holds more than the limit; tasks held by it wait pending,
 * their attempts untouched, and start when the window moves on.
 */
class RateLimitTest {

    private static final String CONFIG = """
      {"queues": {"default": {"slots": 10, "rateLimit": {"tasks": 3, "perMs": 60000},
                              "leaseMs": 600000, "heartbeatMs": 200000}}}
      """;

    @Test
    void two_nodes_start_no_more_than_the_limit_per_window_and_the_held_tasks_start_in_the_next() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock();
        try (TestNode a = TestNode.start(db, CONFIG, clock);
                TestNode b = TestNode.start(db, CONFIG, clock)) {
            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                ids.add(submit(a, null));
                ids.add(submit(b, null));
            }
            List<GateHandler.Call> first = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                first.add(GateHandler.next(TestNode.WAIT));
            }
            // Both nodes had free slots and tasks: the journal refused the rest of the window's starts.
            a.until(
                    () -> a.metric("taskline_tasks_rate_limited_total{queue=\"default\"}")
                                    + b.metric("taskline_tasks_rate_limited_total{queue=\"default\"}")
                            >= 2,
                    () -> "claims refused");
            a.until(() -> heldByRate(a) + heldByRate(b) == 5, () -> "five held by the limit");
            assertEquals(3, running(a), "three started in the window, on either node");
            for (String id : ids) {
                JsonObject task = a.getJson("/api/tasks/" + id);
                if ("pending".equals(task.getString("state"))) {
                    assertEquals(List.of("submitted"), reasons(task), "a refused claim journals nothing");
                    assertEquals(0, task.getInteger("attempt"), "and spends no attempt");
                }
            }
            JsonObject limit = queueIn(a.getJson("/api/queues"), "default").getJsonObject("rateLimit");
            assertEquals(new JsonObject().put("tasks", 3).put("perMs", 60000).put("perKey", false), limit);

            // Within the window, ends free slots but not starts.
            clock.advance(Duration.ofSeconds(59));
            for (GateHandler.Call call : first) {
                call.succeed(new JsonObject());
            }
            for (GateHandler.Call call : first) {
                a.waitForState(call.taskId().toString(), "succeeded");
            }
            assertEquals(0, running(a));
            assertEquals(5, heldByRate(a) + heldByRate(b));

            // The window moves past the first starts: three more, on either node, and no more.
            clock.advance(Duration.ofSeconds(1));
            List<GateHandler.Call> second = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                second.add(GateHandler.next(TestNode.WAIT));
            }
            a.until(() -> heldByRate(a) + heldByRate(b) == 2, () -> "two still held");
            assertEquals(3, running(a));

            clock.advance(Duration.ofSeconds(60));
            second.forEach(call -> call.succeed(new JsonObject()));
            for (int i = 0; i < 2; i++) {
                GateHandler.next(TestNode.WAIT).succeed(new JsonObject());
            }
            for (String id : ids) {
                JsonObject task = a.waitForState(id, "succeeded");
                assertEquals(1, task.getInteger("attempt"), "one attempt each: held claims spent none");
            }
            assertWindowsHold(a, ids, 3, Duration.ofSeconds(60));
        }
    }

    @Test
    void a_per_key_limit_holds_each_key_apart_and_the_tasks_without_a_key_share_one_budget() throws Exception {
        GateHandler.reset();
        String config = """
        {"queues": {"default": {"slots": 10, "rateLimit": {"tasks": 1, "perMs": 60000, "perKey": true},
                                "leaseMs": 600000, "heartbeatMs": 200000}}}
        """;
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), config, clock)) {
            List<String> ids = List.of(
                    submit(node, "model-a"),
                    submit(node, "model-a"),
                    submit(node, "model-b"),
                    submit(node, "model-b"),
                    submit(node, null),
                    submit(node, null));
            Set<String> started = new HashSet<>();
            List<GateHandler.Call> calls = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                GateHandler.Call call = GateHandler.next(TestNode.WAIT);
                calls.add(call);
                started.add(node.getJson("/api/tasks/" + call.taskId()).getString("concurrencyKey", "none"));
            }
            assertEquals(Set.of("model-a", "model-b", "none"), started, "one of each budget, none held up by another");
            node.until(() -> heldByRate(node) == 3, () -> "the second of each budget held");
            assertEquals(3, running(node));
            assertTrue(queueIn(node.getJson("/api/queues"), "default")
                    .getJsonObject("rateLimit")
                    .getBoolean("perKey"));

            clock.advance(Duration.ofSeconds(60));
            calls.forEach(call -> call.succeed(new JsonObject()));
            for (int i = 0; i < 3; i++) {
                GateHandler.next(TestNode.WAIT).succeed(new JsonObject());
            }
            for (String id : ids) {
                node.waitForState(id, "succeeded");
            }
            assertEquals(0, heldByRate(node));
        }
    }

    @Test
    void a_remote_worker_gets_no_more_than_the_window_allows() throws Exception {
        String config = """
        {"queues": {"remote": {"remote": true, "slots": 5, "rateLimit": {"tasks": 2, "perMs": 60000},
                               "leaseMs": 600000, "heartbeatMs": 200000}}}
        """;
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), config, clock)) {
            for (int i = 0; i < 3; i++) {
                var answer = node.post(
                        "/api/tasks", new JsonObject().put("type", "resize").put("queue", "remote"));
                assertEquals(202, answer.statusCode(), answer.bodyAsString());
            }
            // The first ask may be answered before every claim returned; what it holds is never above the limit.
            int got = claim(node, 0).size();
            node.until(() -> heldByRate(node, "remote") == 3 - 2, () -> "one held");
            got += claim(node, 0).size();
            assertEquals(2, got, "two in the window");
            var waiting = node.http
                    .post("/api/queues/remote/claim")
                    .putHeader("Content-Type", "application/json")
                    .sendBuffer(Buffer.buffer(new JsonObject()
                            .put("worker", "w")
                            .put("max", 5)
                            .put("waitMs", 60_000)
                            .encode()));
            clock.advance(Duration.ofSeconds(60));
            JsonArray tasks = TestNode.await(waiting).bodyAsJsonObject().getJsonArray("tasks");
            assertEquals(1, tasks.size(), "the window moved on: the waiting worker gets the third");
        }
    }

    /** Every window of {@code per} holds at most {@code limit} of the tasks' starts, by the journal's own times. */
    private static void assertWindowsHold(TestNode node, List<String> ids, int limit, Duration per) throws Exception {
        List<Instant> starts = new ArrayList<>();
        for (String id : ids) {
            for (Object e : node.getJson("/api/tasks/" + id).getJsonArray("history")) {
                JsonObject event = (JsonObject) e;
                if ("claimed".equals(event.getString("reason"))) {
                    starts.add(Instant.parse(event.getString("at")));
                }
            }
        }
        starts.sort(null);
        for (int i = limit; i < starts.size(); i++) {
            assertTrue(
                    !starts.get(i).isBefore(starts.get(i - limit).plus(per)),
                    "start " + i + " at " + starts.get(i) + " is in the window of start " + (i - limit) + " at "
                            + starts.get(i - limit));
        }
    }

    private static int heldByRate(TestNode node) throws Exception {
        return heldByRate(node, "default");
    }

    private static int heldByRate(TestNode node, String queue) throws Exception {
        return queueIn(node.getJson("/api/queues"), queue).getInteger("heldByRate");
    }

    private static int running(TestNode node) throws Exception {
        return node.getJson("/api/tasks?state=running&limit=1000")
                .getJsonArray("tasks")
                .size();
    }

    private static JsonArray claim(TestNode node, long waitMs) throws Exception {
        var answer = node.post(
                "/api/queues/remote/claim",
                new JsonObject().put("worker", "w").put("max", 5).put("waitMs", waitMs));
        assertEquals(200, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getJsonArray("tasks");
    }

    private static String submit(TestNode node, String key) throws Exception {
        JsonObject body = new JsonObject().put("type", "gate");
        if (key != null) {
            body.put("concurrencyKey", key);
        }
        var answer = node.post("/api/tasks", body);
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }
}
