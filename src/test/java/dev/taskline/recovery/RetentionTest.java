package dev.taskline.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.journal.PgUrl;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Retention deletes finished tasks older than its time to live with their history, and nothing
 * else: not a younger finished task, not an old task that has not finished. It finds them by id
 * (time-ordered), as the journal keeps no index on finished_at. A flow goes whole, once it has
 * ended: until then its tasks that ended are still its children's parents.
 */
class RetentionTest {

    @Test
    void finished_tasks_past_their_time_to_live_go_with_their_history_and_nothing_else_does() throws Exception {
        MutableClock clock = MutableClock.afterEveryId();
        try (TestNode node = TestNode.start(
                TestPostgres.newDatabase(),
                "{\"queues\": {\"default\": {\"slots\": 2}}, \"retention\": {\"finishedTaskTtlMs\": 3600000}}",
                clock)) {
            String old = submit(node, new JsonObject().put("type", "sleep"));
            node.waitForState(old, "succeeded");
            // Made now, due long after the cut-off: old by its id, but not finished.
            String waiting = submit(node, new JsonObject().put("type", "sleep").put("delayMs", 86_400_000L));
            clock.advance(Duration.ofMinutes(90));
            String young = submit(node, new JsonObject().put("type", "sleep"));
            node.waitForState(young, "succeeded");

            assertEquals(
                    1, TestNode.await(node.node.passes().recovery().cleanOnce()), "the finished task past 60 minutes");
            assertEquals(404, node.get("/api/tasks/" + old).statusCode());
            assertEquals("pending", node.getJson("/api/tasks/" + waiting).getString("state"));
            assertEquals("succeeded", node.getJson("/api/tasks/" + young).getString("state"));
            assertEquals(0, TestNode.await(node.node.passes().recovery().cleanOnce()), "nothing more is old enough");

            clock.advance(Duration.ofMinutes(90));
            assertEquals(1, TestNode.await(node.node.passes().recovery().cleanOnce()), "now the younger one too");
            assertEquals(404, node.get("/api/tasks/" + young).statusCode());
            assertEquals("pending", node.getJson("/api/tasks/" + waiting).getString("state"));
        }
    }

    @Test
    void a_flow_goes_as_a_whole_once_it_ended_past_the_time_to_live_with_its_edges_and_keys() throws Exception {
        MutableClock clock = MutableClock.afterEveryId();
        String url = TestPostgres.newDatabase();
        Vertx vertx = Vertx.vertx();
        Pool pool = PgBuilder.pool().connectingTo(PgUrl.parse(url)).using(vertx).build();
        try (TestNode node = TestNode.start(
                url,
                "{\"queues\": {\"default\": {\"slots\": 2}, \"remote\": {\"remote\": true, \"slots\": 2}},"
                        + " \"retention\": {\"finishedTaskTtlMs\": 3600000}}",
                clock)) {
            // Still running when the cut-off passes it: a ended long ago, but b (due in a day) waits on it.
            JsonObject running = flow(node, "b", new JsonObject().put("delayMs", 86_400_000L));
            String a = running.getJsonArray("tasks").getJsonObject(0).getString("id");
            String b = running.getJsonArray("tasks").getJsonObject(1).getString("id");
            node.waitForState(a, "succeeded");
            node.waitForState(b, "pending");
            // Ended: a, then d (a remote worker's), which spawned s into it.
            JsonObject ended =
                    flow(node, "d", new JsonObject().put("type", "split").put("queue", "remote"));
            String endedId = ended.getString("flowId");
            JsonArray claimed = new JsonArray();
            node.until(
                    () -> {
                        claimed.addAll(node.post(
                                        "/api/queues/remote/claim",
                                        new JsonObject().put("worker", "w").put("waitMs", 200))
                                .bodyAsJsonObject()
                                .getJsonArray("tasks"));
                        return !claimed.isEmpty();
                    },
                    () -> "d was never claimed");
            JsonObject d = claimed.getJsonObject(0);
            var spawned = node.post(
                    "/api/tasks/" + d.getString("id") + "/complete",
                    new JsonObject()
                            .put("lease", d.getJsonObject("lease").getString("token"))
                            .put("result", new JsonObject())
                            .put(
                                    "spawn",
                                    new JsonArray()
                                            .add(new JsonObject()
                                                    .put("key", "s")
                                                    .put("type", "sleep"))));
            assertEquals(200, spawned.statusCode(), spawned.bodyAsString());
            node.waitForFlowState(endedId, "succeeded");
            assertEquals(3, count(pool, "SELECT count(*) AS n FROM flow_keys WHERE flow_id = $1", endedId));

            clock.advance(Duration.ofMinutes(90));
            assertEquals(3, TestNode.await(node.node.passes().recovery().cleanOnce()), "the ended flow's three tasks");
            assertEquals(404, node.get("/api/flows/" + endedId).statusCode());
            assertEquals(0, count(pool, "SELECT count(*) AS n FROM flows WHERE id = $1", endedId));
            assertEquals(0, count(pool, "SELECT count(*) AS n FROM flow_keys WHERE flow_id = $1", endedId));
            String runningId = running.getString("flowId");
            assertEquals("succeeded", node.getJson("/api/tasks/" + a).getString("state"), "its flow still runs");
            assertEquals(1, count(pool, "SELECT count(*) AS n FROM task_edges", null), "the running flow's edge");
            assertEquals(2, count(pool, "SELECT count(*) AS n FROM flow_keys WHERE flow_id = $1", runningId));

            assertEquals(
                    202,
                    node.post("/api/tasks/" + b + "/cancel", new JsonObject()).statusCode());
            node.waitForFlowState(runningId, "cancelled");
            assertEquals(0, TestNode.await(node.node.passes().recovery().cleanOnce()), "it ended only now");
            clock.advance(Duration.ofMinutes(90));
            assertEquals(2, TestNode.await(node.node.passes().recovery().cleanOnce()), "now it goes whole");
            assertEquals(404, node.get("/api/flows/" + runningId).statusCode());
            for (String table : new String[] {"tasks", "task_edges", "flow_keys", "flows"}) {
                assertEquals(0, count(pool, "SELECT count(*) AS n FROM " + table, null), table);
            }
        } finally {
            TestNode.await(pool.close());
            TestNode.await(vertx.close());
        }
    }

    /** A flow of two: a, then {@code second} (with {@code options}) once a succeeded. */
    private static JsonObject flow(TestNode node, String second, JsonObject options) throws Exception {
        JsonArray tasks = new JsonArray()
                .add(new JsonObject().put("key", "a").put("type", "sleep"))
                .add(new JsonObject()
                        .put("type", "sleep")
                        .mergeIn(options)
                        .put("key", second)
                        .put("dependsOn", new JsonArray().add("a")));
        var response = node.post("/api/flows", new JsonObject().put("tasks", tasks));
        assertEquals(202, response.statusCode(), response.bodyAsString());
        return response.bodyAsJsonObject();
    }

    private static long count(Pool pool, String sql, String id) throws Exception {
        Tuple args = id == null ? Tuple.tuple() : Tuple.of(java.util.UUID.fromString(id));
        return TestNode.await(pool.preparedQuery(sql).execute(args))
                .iterator()
                .next()
                .getLong("n");
    }

    private static String submit(TestNode node, JsonObject task) throws Exception {
        return node.post("/api/tasks", task).bodyAsJsonObject().getString("id");
    }
}
