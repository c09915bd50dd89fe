package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * A row lock held from outside the node (an operator's transaction left open, a migration of
 * another tool) against the node's lock timeout: each request that needs the row answers 503 with
 * Retry-After once the timeout passes, and gives its connection back, so that more such requests
 * than the pool has connections still leave the node serving everything else; once the lock is let
 * go, the same request succeeds.
 */
class LockTimeoutTest {

    private static final String CONFIG = """
      {"journal": {"poolSize": 2, "lockTimeoutMs": 300},
       "queues": {"default": {"slots": 1}}}
      """;

    @Test
    void a_row_locked_elsewhere_answers_503_after_the_lock_timeout_and_frees_the_connection() throws Exception {
        String db = TestPostgres.newDatabase();
        Vertx vertx = Vertx.vertx();
        try (TestNode node = TestNode.start(db, CONFIG)) {
            String id = node.post(
                            "/api/tasks",
                            new JsonObject()
                                    .put("type", "sleep")
                                    .put("delayMs", 3_600_000)
                                    .put("payload", new JsonObject().put("ms", 1)))
                    .bodyAsJsonObject()
                    .getString("id");
            Pool outside =
                    PgBuilder.pool().connectingTo(PgUrl.parse(db)).using(vertx).build();
            SqlConnection holder = await(outside.getConnection());
            await(holder.query("BEGIN").execute());
            await(holder.preparedQuery("SELECT id FROM tasks WHERE id = $1 FOR UPDATE")
                    .execute(Tuple.of(UUID.fromString(id))));

            // Three at once, against a pool of two: each waits its 300 ms for the lock, then lets go.
            List<Future<HttpResponse<Buffer>>> cancels = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                cancels.add(node.http
                        .post("/api/tasks/" + id + "/cancel")
                        .putHeader("Content-Type", "application/json")
                        .sendJsonObject(new JsonObject()));
            }
            for (Future<HttpResponse<Buffer>> answer : cancels) {
                HttpResponse<Buffer> cancel = await(answer);
                assertEquals(503, cancel.statusCode(), cancel.bodyAsString());
                assertNotNull(cancel.getHeader("Retry-After"), "503 without Retry-After");
            }
            // The pool is not held: other work goes on while the row stays locked.
            HttpResponse<Buffer> other = node.post(
                    "/api/tasks", new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 1)));
            assertEquals(202, other.statusCode(), other.bodyAsString());
            node.waitForState(other.bodyAsJsonObject().getString("id"), "succeeded");
            assertEquals(200, node.get("/health/ready").statusCode());

            await(holder.query("COMMIT").execute());
            await(holder.close());
            HttpResponse<Buffer> cancel = node.post("/api/tasks/" + id + "/cancel", new JsonObject());
            assertEquals(202, cancel.statusCode(), cancel.bodyAsString());
            assertEquals("cancelled", cancel.bodyAsJsonObject().getString("state"));
            await(outside.close());
        } finally {
            await(vertx.close());
        }
    }
}
