package dev.taskline.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

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
import java.time.Instant;
import org.junit.jupiter.api.Test;

/**
 * Retention drops a unit of the journal (the finished tasks created within one interval, with their
 * events: migration 000030) whole, once everything in it ended longer ago than the time to live, and
 * nothing else: not a younger unit, not a task that has not finished (it is not in the unit's tables,
 * and its history moves out before they go). A flow holds the unit of any of its finished tasks
 * until it ended as a whole: until then they are still its children's parents. Rows no unit holds
 * (created where none was made) go a batch at a time, as before units.
 */
class RetentionTest {

    private static final Duration HOUR = Duration.ofHours(1);
    private static final String CONFIG = "{\"queues\": {\"default\": {\"slots\": 2}},"
            + " \"retention\": {\"finishedTaskTtlMs\": 3600000, \"partitionIntervalMs\": 3600000}}";

    @Test
    void a_unit_goes_whole_once_everything_in_it_ended_past_the_time_to_live() throws Exception {
        MutableClock clock = MutableClock.afterEveryId();
        Instant unitStart = Instant.ofEpochMilli(clock.millis() / HOUR.toMillis() * HOUR.toMillis());
        String url = TestPostgres.newDatabase();
        Vertx vertx = Vertx.vertx();
        Pool pool = PgBuilder.pool().connectingTo(PgUrl.parse(url)).using(vertx).build();
        try (TestNode node = TestNode.start(url, CONFIG, clock)) {
            Retention retention = node.node.passes().retention();
            String old = submit(node, new JsonObject().put("type", "sleep"));
            node.waitForState(old, "succeeded");
            // Made in the same unit, due long after the cut-off: it has not finished, so it holds nothing.
            String waiting = submit(node, new JsonObject().put("type", "sleep").put("delayMs", 86_400_000L));
            long waitingEvents = count(pool, "SELECT count(*) AS n FROM task_events WHERE task_id = $1", waiting);
            assertEquals(1, waitingEvents, "submitted");

            clock.advance(Duration.between(clock.instant(), unitStart.plus(HOUR).plusSeconds(60)));
            String young = submit(node, new JsonObject().put("type", "sleep"));
            node.waitForState(young, "succeeded");
            // (Units with nothing in them that ended before the cut-off go at every pass, as they come.)
            TestNode.await(retention.runOnce());
            assertEquals(200, node.get("/api/tasks/" + old).statusCode(), "nothing ended an hour ago yet");

            clock.advance(HOUR);
            Retention.Pass pass = TestNode.await(retention.runOnce());
            assertTrue(pass.dropped() >= 1, "the first unit: " + pass);
            assertEquals(404, node.get("/api/tasks/" + old).statusCode());
            assertEquals(0, count(pool, "SELECT count(*) AS n FROM task_events WHERE task_id = $1", old));
            assertEquals("succeeded", node.getJson("/api/tasks/" + young).getString("state"));
            JsonObject kept = node.getJson("/api/tasks/" + waiting);
            assertEquals("pending", kept.getString("state"));
            assertEquals(
                    waitingEvents,
                    count(pool, "SELECT count(*) AS n FROM task_events WHERE task_id = $1", waiting),
                    "the unfinished task's history was kept");
            assertEquals(0, TestNode.await(retention.runOnce()).dropped(), "nothing more is old enough");
            assertEquals(200, node.get("/api/tasks/" + young).statusCode());

            clock.advance(HOUR);
            TestNode.await(retention.runOnce());
            assertEquals(404, node.get("/api/tasks/" + young).statusCode());

            // The task whose unit went ends now, with no unit to take it: it goes by the batches.
            assertEquals(
                    202,
                    node.post("/api/tasks/" + waiting + "/cancel", new JsonObject())
                            .statusCode());
            node.waitForState(waiting, "cancelled");
            assertEquals(0, TestNode.await(retention.runOnce()).deleted(), "it ended only now");
            clock.advance(Duration.ofMinutes(90));
            assertEquals(1, TestNode.await(retention.runOnce()).deleted(), "its batch took it");
            assertEquals(404, node.get("/api/tasks/" + waiting).statusCode());
            assertEquals(0, count(pool, "SELECT count(*) AS n FROM task_events WHERE task_id = $1", waiting));
        } finally {
            TestNode.await(pool.close());
            TestNode.await(vertx.close());
        }
    }

    @Test
    void a_flow_holds_its_unit_until_it_ended_then_its_rows_go_with_it() throws Exception {
        MutableClock clock = MutableClock.afterEveryId();
        String url = TestPostgres.newDatabase();
        Vertx vertx = Vertx.vertx();
        Pool pool = PgBuilder.pool().connectingTo(PgUrl.parse(url)).using(vertx).build();
        try (TestNode node = TestNode.start(url, CONFIG, clock)) {
            Retention retention = node.node.passes().retention();
            // a ends at once; b, due in a day, waits on it: the flow runs past the cut-off.
            JsonObject flow = flow(node, "b", new JsonObject().put("delayMs", 86_400_000L));
            String flowId = flow.getString("flowId");
            String a = flow.getJsonArray("tasks").getJsonObject(0).getString("id");
            String b = flow.getJsonArray("tasks").getJsonObject(1).getString("id");
            node.waitForState(a, "succeeded");
            node.waitForState(b, "pending");

            clock.advance(HOUR.multipliedBy(3));
            TestNode.await(retention.runOnce());
            assertEquals("succeeded", node.getJson("/api/tasks/" + a).getString("state"));
            assertEquals(1, count(pool, "SELECT count(*) AS n FROM task_edges", null));

            assertEquals(
                    202,
                    node.post("/api/tasks/" + b + "/cancel", new JsonObject()).statusCode());
            node.waitForFlowState(flowId, "cancelled");
            TestNode.await(retention.runOnce());
            assertEquals(200, node.get("/api/tasks/" + a).statusCode(), "it ended only now");
            clock.advance(Duration.ofMinutes(90));
            Retention.Pass pass = TestNode.await(retention.runOnce());
            assertEquals(404, node.get("/api/tasks/" + a).statusCode(), "now the unit goes: " + pass);
            // Its rows in the tables not split by unit go after, a batch at a time.
            for (int round = 0; TestNode.await(retention.runOnce()).leftovers() > 0; round++) {
                assertTrue(round < 10, "a batch at a time, and a few of them at most");
            }
            assertEquals(404, node.get("/api/flows/" + flowId).statusCode());
            assertEquals(404, node.get("/api/tasks/" + a).statusCode());
            for (String table :
                    new String[] {"task_edges", "flow_keys", "flows", "journal_units WHERE dropped_at IS NOT NULL"}) {
                assertEquals(0, count(pool, "SELECT count(*) AS n FROM " + table, null), table);
            }
            assertEquals(404, node.get("/api/tasks/" + b).statusCode(), "b ended in the unit, and went with it");
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
