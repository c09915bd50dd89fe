package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.PgBouncer;
import dev.taskline.testing.SubmitLoad;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.TreeMap;
import org.junit.jupiter.api.Test;

/**
 * Nodes whose journal URL goes through Debian's PgBouncer in transaction pooling mode (each
 * transaction may land on another backend: no named prepared statement, no session setting), with
 * their listening connection straight to PostgreSQL ({@code cluster.listenUrl}), as a managed
 * PostgreSQL behind a pooler is used: the life of tasks, keys, flows, durable steps and schedules,
 * a wake-up from one node to the other, and the pooler killed and started again under load.
 */
class PgBouncerTest {

    private static final String QUEUES = """
      {"default": {"slots": 1, "claimAhead": 0},
       "work": {"slots": 8, "capacity": 100000},
       "keyed": {"slots": 4, "keyConcurrency": 1}}
      """;

    /** The timed passes an hour apart: what crosses between the nodes comes through LISTEN, or not at all. */
    private static String config(String listenUrl) {
        return config(listenUrl, 3_600_000);
    }

    private static String config(String listenUrl, long recoveryMs) {
        JsonObject cluster = new JsonObject().put("fallbackMs", 3_600_000);
        if (listenUrl != null) {
            cluster.put("listenUrl", listenUrl);
        }
        return new JsonObject()
                .put("queues", new JsonObject(QUEUES))
                .put("recovery", new JsonObject().put("intervalMs", recoveryMs))
                .put("cluster", cluster)
                .put("scheduler", new JsonObject().put("graceMs", 0))
                .put("worker", new JsonObject().put("progressIntervalMs", 0))
                .encode();
    }

    @Test
    void tasks_keys_flows_steps_schedules_and_wake_ups_work_through_a_transaction_pooler() throws Exception {
        assumeTrue(PgBouncer.installed(), "no pgbouncer on this machine (.ci/run installs it)");
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock(Instant.parse("2026-12-01T10:00:00.250Z"));
        try (PgBouncer bouncer = PgBouncer.start(db);
                TestNode a = TestNode.start(bouncer.url(), config(db), clock);
                TestNode b = TestNode.start(bouncer.url(), config(db), clock)) {
            // A task waiting on a's busy slot is taken by b at once: told over b's listening connection.
            String first = submit(a, new JsonObject().put("type", "gate"));
            GateHandler.Call onA = GateHandler.next(TestNode.WAIT);
            String second = submit(a, new JsonObject().put("type", "gate"));
            GateHandler.Call onB = GateHandler.next(TestNode.WAIT);
            assertEquals(second, onB.taskId().toString());
            assertEquals(b.node.nodeId() + "/default", a.claimedBy(second), bouncer.log());
            onB.succeed(new JsonObject());
            onA.succeed(new JsonObject());
            a.waitForState(first, "succeeded");
            b.waitForState(second, "succeeded");

            // Many statements at once on every pooled connection: a batch on each node.
            List<String> work = new ArrayList<>();
            for (TestNode node : List.of(a, b)) {
                JsonArray tasks = new JsonArray();
                for (int i = 0; i < 100; i++) {
                    tasks.add(new JsonObject()
                            .put("type", "sleep")
                            .put("queue", "work")
                            .put("payload", new JsonObject().put("ms", 1)));
                }
                JsonObject answer = node.post("/api/batches", new JsonObject().put("tasks", tasks))
                        .bodyAsJsonObject();
                answer.getJsonArray("tasks").forEach(t -> work.add(((JsonObject) t).getString("id")));
            }
            for (String id : work) {
                a.waitForState(id, "succeeded");
            }

            // An idempotency key gives the same task on either node; a concurrency key lets one run at a time.
            JsonObject keyed = new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 1));
            assertEquals(submitKeyed(a, keyed, "pooled-1"), submitKeyed(b, keyed, "pooled-1"));
            List<String> sameKey = new ArrayList<>();
            for (int i = 0; i < 4; i++) {
                sameKey.add(submit(
                        i % 2 == 0 ? a : b, keyed.copy().put("queue", "keyed").put("concurrencyKey", "k")));
            }
            for (String id : sameKey) {
                a.waitForState(id, "succeeded");
            }

            // A chain: each child made ready by its parent's end, on whichever node ran it.
            JsonObject sleep = new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 1));
            String flow = a.post(
                            "/api/flows",
                            new JsonObject()
                                    .put("name", "pooled-chain")
                                    .put(
                                            "chain",
                                            new JsonArray()
                                                    .add(sleep)
                                                    .add(sleep)
                                                    .add(sleep)))
                    .bodyAsJsonObject()
                    .getString("flowId");
            b.waitForFlowState(flow, "succeeded");

            // Durable steps and a signal: the order saga waits for its payment, sent through the other node.
            String order = submit(
                    a,
                    new JsonObject()
                            .put("type", "order")
                            .put("queue", "work")
                            .put("payload", new JsonObject().put("orderId", "o-pooled")));
            a.waitForTask(
                    order,
                    t -> "pending".equals(t.getString("state")) && t.getValue("wait") != null,
                    "waiting for its payment");
            assertEquals(
                    202,
                    b.post(
                                    "/api/tasks/" + order + "/signals/payment",
                                    new JsonObject().put("payload", new JsonObject().put("paid", true)))
                            .statusCode());
            JsonObject shipped = a.waitForState(order, "succeeded");
            assertEquals("shipped", shipped.getJsonObject("result").getString("status"), shipped.encode());

            // A schedule's ticks, each fired once by whichever node's pass takes it.
            JsonObject schedule = new JsonObject()
                    .put("name", "pooled-beat")
                    .put("every", "PT1S")
                    .put("task", sleep);
            assertEquals(201, a.post("/api/schedules", schedule).statusCode());
            TestNode.await(b.node.passes().scheduler().runOnce());
            for (int i = 0; i < 3; i++) {
                clock.advance(Duration.ofSeconds(1));
                TestNode.await(Future.all(
                        a.node.passes().scheduler().runOnce(),
                        b.node.passes().scheduler().runOnce()));
            }
            a.until(() -> scheduled(a, "pooled-beat") == 3, () -> "three ticks of pooled-beat");
        }
    }

    @Test
    void without_a_listening_url_a_pooled_node_polls_and_still_hands_work_to_the_other() throws Exception {
        assumeTrue(PgBouncer.installed(), "no pgbouncer on this machine (.ci/run installs it)");
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        try (PgBouncer bouncer = PgBouncer.start(db);
                TestNode a = TestNode.start(bouncer.url(), config(null));
                TestNode b = TestNode.start(bouncer.url(), config(null))) {
            assertFalse(a.node.passes().cluster().listening(), "a pooled node listening through the pooler");
            // Recovery and the timed passes are an hour apart: only the listener's poll can tell b.
            String first = submit(a, new JsonObject().put("type", "gate"));
            GateHandler.Call onA = GateHandler.next(TestNode.WAIT);
            String second = submit(a, new JsonObject().put("type", "gate"));
            GateHandler.Call onB = GateHandler.next(TestNode.WAIT);
            assertEquals(second, onB.taskId().toString());
            assertEquals(b.node.nodeId() + "/default", a.claimedBy(second));
            onB.succeed(new JsonObject());
            onA.succeed(new JsonObject());
            a.waitForState(first, "succeeded");
            b.waitForState(second, "succeeded");
        }
    }

    @Test
    void a_pooler_killed_under_load_answers_503_meanwhile_and_loses_nothing_acknowledged() throws Exception {
        assumeTrue(PgBouncer.installed(), "no pgbouncer on this machine (.ci/run installs it)");
        String db = TestPostgres.newDatabase();
        // Recovery on its usual timer: a claim the pooler's death failed leaves its task pending in the
        // journal (or handed back), to be paged in again by the next pass.
        MutableClock clock = new MutableClock();
        try (PgBouncer bouncer = PgBouncer.start(db);
                TestNode a = TestNode.start(bouncer.url(), config(db, 1_000), clock);
                TestNode b = TestNode.start(bouncer.url(), config(db, 1_000), clock)) {
            SubmitLoad load = new SubmitLoad(List.of(a, b), 4);
            load.start();
            load.accepted(200);

            bouncer.kill();
            load.untilAnswered(503);
            long restarted = System.nanoTime();
            bouncer.start();
            long back = load.firstAcceptedAfter(restarted);
            load.accepted(load.acceptedCount() + 200);
            load.stop();

            assertTrue(Set.of(202, 503).containsAll(load.statuses.keySet()), "answers: " + load.statuses);
            assertEquals(List.of(), load.withoutRetryAfter, "a 503 without Retry-After");
            // A claim whose answer the kill lost may have committed: the node hands that lease back, so
            // that no task waits for its lease to lapse, nor counts a second attempt.
            SubmitLoad.everySucceededOnce(db, new ArrayList<>(load.accepted));
            System.out.println("pgbouncer restart: writes back " + (back - restarted) / 1_000_000
                    + " ms after it listened again; answers " + new TreeMap<>(load.statuses) + "; "
                    + load.accepted.size() + " accepted, all succeeded once, at their first attempt");
        }
    }

    private static String submit(TestNode node, JsonObject task) throws Exception {
        var answer = node.post("/api/tasks", task);
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }

    private static String submitKeyed(TestNode node, JsonObject task, String key) throws Exception {
        return TestNode.await(node.http
                        .post("/api/tasks")
                        .putHeader("Idempotency-Key", key)
                        .sendJsonObject(task))
                .bodyAsJsonObject()
                .getString("id");
    }

    private static long scheduled(TestNode node, String name) throws Exception {
        return node.getJson("/api/tasks?limit=1000").getJsonArray("tasks").stream()
                .map(JsonObject.class::cast)
                .filter(t -> name.equals(t.getString("schedule")))
                .count();
    }
}
