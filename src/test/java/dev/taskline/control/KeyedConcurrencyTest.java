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
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * Keyed concurrency over HTTP, two nodes on one PostgreSQL: a key's bound holds across nodes (the
 * journal decides, in the claim), a full key holds up no other task, and its tasks start as soon as
 * room frees on any node.
 */
class KeyedConcurrencyTest {

    private static final String CONFIG = """
      {"queues": {"default": {"slots": 10, "keyConcurrency": 2, "keyLimits": {"solo": 1},
                              "leaseMs": 600000, "heartbeatMs": 200000}}}
      """;

    @Test
    void a_third_task_of_a_key_waits_on_any_node_while_two_run_and_holds_up_nothing_else() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock();
        try (TestNode a = TestNode.start(db, CONFIG, clock);
                TestNode b = TestNode.start(db, CONFIG, clock)) {
            List<String> onA = List.of(submit(a, "gate", "model-a"), submit(a, "gate", "model-a"));
            Set<String> started = new HashSet<>();
            GateHandler.Call first = GateHandler.next(TestNode.WAIT);
            GateHandler.Call second = GateHandler.next(TestNode.WAIT);
            started.add(first.taskId().toString());
            started.add(second.taskId().toString());
            assertEquals(Set.copyOf(onA), started, "two of the key run at once");

            // The third and fourth go to the other node: its own count of the key is 0, the journal's 2.
            List<String> onB = List.of(submit(b, "gate", "model-a"), submit(b, "gate", "model-a"));
            b.until(
                    () -> b.metric("taskline_tasks_key_full_total{queue=\"default\"}") >= 2,
                    () -> "b's claims refused");
            for (String id : onB) {
                JsonObject task = b.getJson("/api/tasks/" + id);
                assertEquals("pending", task.getString("state"));
                assertEquals(List.of("submitted"), reasons(task), "a refused claim journals nothing");
                assertEquals("model-a", task.getString("concurrencyKey"));
            }
            assertEquals(2, queueIn(b.getJson("/api/queues"), "default").getInteger("waiting"));
            assertEquals(2, runningOfKey(a, "model-a"));

            // No head-of-line blocking: a task of another key, and one without a key, start on b at once.
            String other = submit(b, "gate", "model-b");
            String plain = submit(b, "gate", null);
            Set<String> next = new HashSet<>();
            GateHandler.Call c3 = GateHandler.next(TestNode.WAIT);
            GateHandler.Call c4 = GateHandler.next(TestNode.WAIT);
            next.add(c3.taskId().toString());
            next.add(c4.taskId().toString());
            assertEquals(Set.of(other, plain), next);

            // Room frees on a: b's retry takes one, and only one, of its two.
            clock.advance(Duration.ofSeconds(1));
            first.succeed(new JsonObject());
            a.waitForState(first.taskId().toString(), "succeeded");
            GateHandler.Call fifth = GateHandler.next(TestNode.WAIT);
            assertTrue(onB.contains(fifth.taskId().toString()), "one of b's tasks of the key starts");
            assertEquals(2, runningOfKey(a, "model-a"), "never a third");

            clock.advance(Duration.ofSeconds(1));
            for (GateHandler.Call call : List.of(second, fifth, c3, c4)) {
                call.succeed(new JsonObject());
            }
            GateHandler.Call sixth = GateHandler.next(TestNode.WAIT);
            assertTrue(onB.contains(sixth.taskId().toString()));
            sixth.succeed(new JsonObject());
            List<String> all = new ArrayList<>(onA);
            all.addAll(onB);
            for (String id : all) {
                b.waitForState(id, "succeeded");
            }
            assertEquals(0, runningOfKey(a, "model-a"));
        }
    }

    @Test
    void a_key_with_its_own_bound_runs_one_at_a_time_on_one_node() throws Exception {
        GateHandler.reset();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, new MutableClock())) {
            String one = submit(node, "gate", "solo");
            String two = submit(node, "gate", "solo");
            GateHandler.Call call = GateHandler.next(TestNode.WAIT);
            assertEquals(one, call.taskId().toString(), "the first in line, of the same priority");
            // The second waits here, aside: the node's own count says the key is full, so it is not even claimed.
            node.until("/api/queues", q -> queueIn(q, "default").getInteger("heldByKeys") == 1);
            assertEquals(List.of("submitted"), reasons(node.getJson("/api/tasks/" + two)));
            JsonObject queue = queueIn(node.getJson("/api/queues"), "default");
            assertEquals(2, queue.getInteger("keyConcurrency"));
            assertEquals(1, queue.getJsonObject("keyLimits").getInteger("solo"));
            call.succeed(new JsonObject());
            GateHandler.Call next = GateHandler.next(TestNode.WAIT);
            assertEquals(two, next.taskId().toString());
            next.succeed(new JsonObject());
            node.waitForState(two, "succeeded");
            assertEquals(
                    0.0,
                    node.metric("taskline_tasks_key_full_total{queue=\"default\"}"),
                    "one node alone never asks the journal for a key it knows is full");
        }
    }

    @Test
    void a_key_held_by_a_node_whose_lease_lapsed_frees_and_the_bound_holds_through_the_takeover() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        // Recovery runs only when the test says (b's pass below): a's own timed pass, reading the
        // journal every few seconds, could otherwise page in and start the waiting task the moment
        // b's takeover frees the key, and the test would wait on b for a task a runs.
        String config = """
        {"queues": {"default": {"slots": 2, "keyConcurrency": 1, "leaseMs": 1000, "heartbeatMs": 200}},
         "recovery": {"intervalMs": 3600000}}
        """;
        // Both clocks start at one instant: b's, made once a had started (which may take over a second
        // on a loaded machine), would otherwise already stand past a's lease, and b could take the key
        // before the test lets a's lease lapse.
        MutableClock clockA = new MutableClock();
        MutableClock clockB = new MutableClock(clockA.instant());
        try (TestNode a = TestNode.start(db, config, clockA);
                TestNode b = TestNode.start(db, config, clockB)) {
            String held = submit(a, "gate", "model-a");
            GateHandler.Call onA = GateHandler.next(TestNode.WAIT);
            String waiting = submit(b, "gate", "model-a");
            b.until(() -> b.metric("taskline_tasks_key_full_total{queue=\"default\"}") >= 1, () -> "b's claim refused");

            // a stops renewing (its clock stands still, b's moves past the lease): b takes its task over.
            b.clock.advance(Duration.ofSeconds(10));
            TestNode.await(b.node.passes().recovery().runOnce());
            // Either of the two may take the key's place that the lapse freed; the other waits for it.
            GateHandler.Call onB = GateHandler.next(TestNode.WAIT);
            String first = onB.taskId().toString();
            String second = first.equals(held) ? waiting : held;
            assertTrue(Set.of(held, waiting).contains(first));
            b.waitForState(second, "pending"); // the other task back to pending or still waiting
            assertEquals(1, runningOfKey(b, "model-a"), "the bound holds through the takeover");

            onA.succeed(new JsonObject().put("by", "a"));
            a.until("/api/queues", q -> queueIn(q, "default").getInteger("fencedWrites") >= 1);
            onB.succeed(new JsonObject().put("by", "b"));
            b.waitForState(first, "succeeded");
            GateHandler.Call next = GateHandler.next(TestNode.WAIT);
            assertEquals(second, next.taskId().toString(), "then the key's place goes to the other");
            next.succeed(new JsonObject().put("by", "b"));
            assertEquals(
                    "b",
                    b.waitForState(held, "succeeded").getJsonObject("result").getString("by"),
                    "a's late result did not land");
            b.waitForState(waiting, "succeeded");
        }
    }

    @Test
    void remote_workers_on_two_nodes_get_no_more_of_a_key_than_its_bound() throws Exception {
        String db = TestPostgres.newDatabase();
        String config = """
        {"queues": {"remote": {"remote": true, "slots": 5, "keyConcurrency": 1, "leaseMs": 600000,
                               "heartbeatMs": 200000}}}
        """;
        try (TestNode a = TestNode.start(db, config, new MutableClock());
                TestNode b = TestNode.start(db, config, new MutableClock())) {
            String first = submitTo(a, "model-a");
            String second = submitTo(b, "model-a");
            JsonObject onA = claim(a, 0).getJsonObject(0);
            assertEquals(first, onA.getString("id"));
            // b's worker asks while a's holds the key's only place: the journal refuses, b holds the task.
            assertEquals(0, claim(b, 0).size());
            b.until(() -> b.metric("taskline_tasks_key_full_total{queue=\"remote\"}") >= 1, () -> "b's claim refused");
            assertEquals("pending", b.getJson("/api/tasks/" + second).getString("state"));
            var waiting = b.http.post("/api/queues/remote/claim")
                    .putHeader("Content-Type", "application/json")
                    .sendBuffer(Buffer.buffer(new JsonObject()
                            .put("worker", "w-b")
                            .put("max", 5)
                            .put("waitMs", 60_000)
                            .encode()));
            assertEquals(
                    200,
                    a.post(
                                    "/api/tasks/" + first + "/complete",
                                    new JsonObject()
                                            .put(
                                                    "lease",
                                                    onA.getJsonObject("lease").getString("token"))
                                            .put("result", new JsonObject()))
                            .statusCode());
            var tasks = TestNode.await(waiting).bodyAsJsonObject().getJsonArray("tasks");
            assertEquals(1, tasks.size(), "once the key has room, b's waiting worker gets its task");
            assertEquals(second, tasks.getJsonObject(0).getString("id"));
        }
    }

    private static String submitTo(TestNode node, String key) throws Exception {
        var answer = node.post(
                "/api/tasks",
                new JsonObject().put("type", "resize").put("queue", "remote").put("concurrencyKey", key));
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }

    private static JsonArray claim(TestNode node, long waitMs) throws Exception {
        var answer = node.post(
                "/api/queues/remote/claim",
                new JsonObject()
                        .put("worker", "w-" + node.node.nodeId())
                        .put("max", 5)
                        .put("waitMs", waitMs));
        assertEquals(200, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getJsonArray("tasks");
    }

    @Test
    void a_bad_concurrency_key_is_refused_and_nothing_is_journaled() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, new MutableClock())) {
            for (Object bad : new Object[] {"", "x".repeat(129), 7, "a\u0000b"}) {
                var answer = node.post(
                        "/api/tasks", new JsonObject().put("type", "sleep").put("concurrencyKey", bad));
                assertEquals(422, answer.statusCode(), String.valueOf(bad));
                assertTrue(answer.bodyAsJsonObject().getString("detail").contains("concurrencyKey"));
            }
            assertEquals(0, queueIn(node.getJson("/api/queues"), "default").getInteger("accepted"));
            assertEquals(0, node.getJson("/api/tasks").getJsonArray("tasks").size());
        }
    }

    /** How many tasks of {@code key} the journal has running (leased), on any node. */
    private static int runningOfKey(TestNode node, String key) throws Exception {
        int n = 0;
        for (Object t : node.getJson("/api/tasks?state=running&limit=1000").getJsonArray("tasks")) {
            if (key.equals(((JsonObject) t).getString("concurrencyKey"))) {
                n++;
            }
        }
        return n;
    }

    private static String submit(TestNode node, String type, String key) throws Exception {
        JsonObject body = new JsonObject().put("type", type);
        if (key != null) {
            body.put("concurrencyKey", key);
        }
        var answer = node.post("/api/tasks", body);
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }
}
