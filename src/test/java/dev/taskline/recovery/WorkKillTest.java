package dev.taskline.recovery;

import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.testing.ChildNode;
import dev.taskline.testing.ChildNodeTest;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A node killed with SIGKILL while remote workers' work calls are in flight: one whose completions
 * had committed and whose claim was waiting, one whose completions were not committed yet. Every
 * task of the first batch has succeeded once; every task of the second runs again on another node
 * once its lease lapsed and succeeds once.
 */
class WorkKillTest extends ChildNodeTest {

    private static final String CONFIG = """
      {"queues":{"remote":{"remote":true,"slots":20,"leaseMs":20000,"heartbeatMs":10000}},
       "recovery":{"intervalMs":600000}}
      """;

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void a_kill_between_a_batchs_completion_and_the_next_claim_leaves_each_task_succeeded_once() throws Exception {
        String db = TestPostgres.newDatabase();
        Map<String, String> env = childEnv(CONFIG);
        env.put("TASKLINE_PG_URL", db);
        ChildNode first = startChild("node1", env);
        Vertx vertx = Vertx.vertx();
        Pool pool = journalPool(vertx, db);
        HttpClient http = HttpClient.newHttpClient();
        try {
            for (int i = 0; i < 10; i++) {
                assertEquals(
                        202,
                        first.post(
                                        "/api/tasks",
                                        new JsonObject().put("type", "render").put("queue", "remote"))
                                .statusCode());
            }
            JsonArray claimed = new JsonObject(first.post(
                                    "/api/queues/remote/work",
                                    new JsonObject().put("worker", "w1").put("max", 10))
                            .body())
                    .getJsonArray("tasks");
            assertEquals(10, claimed.size());
            List<JsonObject> committed = new ArrayList<>();
            List<JsonObject> lost = new ArrayList<>();
            for (int i = 0; i < 10; i++) {
                (i < 5 ? committed : lost).add(claimed.getJsonObject(i));
            }

            // The first batch's completions commit; its claim then waits for tasks that never come.
            var waiting = http.sendAsync(work(first, committed), java.net.http.HttpResponse.BodyHandlers.ofString());
            long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (count(pool, ids(committed), "succeeded") < 5 && System.nanoTime() < deadline) {
                pause(10);
            }
            assertEquals(5, count(pool, ids(committed), "succeeded"));

            // The second batch's completions wait on row locks held here, and die with the node.
            SqlConnection holder = TestNode.await(pool.getConnection());
            TestNode.await(holder.query("BEGIN").execute());
            TestNode.await(holder.preparedQuery("SELECT 1 FROM tasks WHERE id = ANY ($1::uuid[]) FOR UPDATE")
                    .execute(Tuple.of(ids(lost))));
            var blocked = http.sendAsync(work(first, lost), java.net.http.HttpResponse.BodyHandlers.ofString());
            int backend = waitForBlockedEnd(pool);
            first.kill(Duration.ofSeconds(30));
            TestNode.await(pool.preparedQuery("SELECT pg_terminate_backend($1)").execute(Tuple.of(backend)));
            TestNode.await(holder.query("ROLLBACK").execute());
            holder.close();
            waiting.handle((r, e) -> null).get(30, TimeUnit.SECONDS);
            blocked.handle((r, e) -> null).get(30, TimeUnit.SECONDS);
            assertEquals(5, count(pool, ids(lost), "running"), "the second batch's ends were not journaled");

            MutableClock clock = new MutableClock();
            clock.advance(Duration.ofSeconds(60));
            try (TestNode second = TestNode.start(db, CONFIG, clock)) {
                TestNode.await(second.node.passes().recovery().runOnce());
                List<JsonObject> again = new ArrayList<>();
                long until = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
                while (again.size() < 5 && System.nanoTime() < until) {
                    second.post(
                                    "/api/queues/remote/work",
                                    new JsonObject()
                                            .put("worker", "w2")
                                            .put("max", 10)
                                            .put("waitMs", 1000))
                            .bodyAsJsonObject()
                            .getJsonArray("tasks")
                            .forEach(t -> again.add((JsonObject) t));
                }
                assertEquals(ids(lost).length, again.size());
                JsonArray complete = new JsonArray();
                again.forEach(t -> complete.add(done(t)));
                second.post("/api/queues/remote/complete", new JsonObject().put("tasks", complete));
                for (JsonObject task : committed) {
                    JsonObject stored = second.getJson("/api/tasks/" + task.getString("id"));
                    assertEquals(List.of("submitted", "claimed", "succeeded"), reasons(stored), stored::encode);
                }
                for (JsonObject task : lost) {
                    JsonObject stored = second.getJson("/api/tasks/" + task.getString("id"));
                    assertEquals(
                            List.of("submitted", "claimed", "lease_expired", "claimed", "succeeded"),
                            reasons(stored),
                            stored::encode);
                }
            }
        } finally {
            pool.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    private static JsonObject done(JsonObject task) {
        return new JsonObject()
                .put("id", task.getString("id"))
                .put("lease", task.getJsonObject("lease").getString("token"))
                .put("result", new JsonObject().put("ok", true));
    }

    private static HttpRequest work(ChildNode node, List<JsonObject> batch) {
        JsonArray complete = new JsonArray();
        batch.forEach(t -> complete.add(done(t)));
        return HttpRequest.newBuilder(URI.create("http://127.0.0.1:" + node.port() + "/api/queues/remote/work"))
                .timeout(Duration.ofSeconds(90))
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(new JsonObject()
                        .put("worker", "w1")
                        .put("max", 10)
                        .put("waitMs", 60_000)
                        .put("complete", complete)
                        .encode()))
                .build();
    }

    private static UUID[] ids(List<JsonObject> tasks) {
        return tasks.stream().map(t -> UUID.fromString(t.getString("id"))).toArray(UUID[]::new);
    }

    private static int count(Pool pool, UUID[] ids, String state) throws Exception {
        Row row = TestNode.await(
                        pool.preparedQuery("SELECT count(*) AS n FROM tasks WHERE id = ANY ($1::uuid[]) AND state = $2")
                                .execute(Tuple.of(ids, state)))
                .iterator()
                .next();
        return row.getInteger("n");
    }
}
