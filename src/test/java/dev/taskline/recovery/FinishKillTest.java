package dev.taskline.recovery;

import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.ChildNode;
import dev.taskline.testing.ChildNodeTest;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * A slot is free when its handler returns and the task's end is journaled behind it. A node killed
 * with SIGKILL in between (its handler returned, its end not committed) must leave the task to be
 * run again and to succeed exactly once, never lost. The test holds the task's row, so that the
 * end waits on the lock, kills the node while it waits, ends the dead node's sessions, and lets a
 * second node take over once the lease has lapsed on its clock.
 */
class FinishKillTest extends ChildNodeTest {

    private static final String CONFIG = """
      {"queues":{"default":{"slots":2,"leaseMs":20000,"heartbeatMs":10000}},"recovery":{"intervalMs":600000}}
      """;

    @Test
    @Timeout(value = 3, unit = TimeUnit.MINUTES)
    void a_kill_after_the_handler_returned_and_before_its_end_committed_runs_the_task_again_once() throws Exception {
        String db = TestPostgres.newDatabase();
        Map<String, String> env = childEnv(CONFIG);
        env.put("TASKLINE_PG_URL", db);
        ChildNode first = startChild("node1", env);
        Vertx vertx = Vertx.vertx();
        Pool pool = journalPool(vertx, db);
        try {
            String id = new JsonObject(first.post(
                                    "/api/tasks",
                                    new JsonObject()
                                            .put("type", "sleep")
                                            .put("payload", new JsonObject().put("ms", 300)))
                            .body())
                    .getString("id");
            // Running first: a lock taken before the claim would hold the claim, not the end.
            long running = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
            while (!"running".equals(first.getJson("/api/tasks/" + id).getString("state"))
                    && System.nanoTime() < running) {
                pause(5);
            }
            SqlConnection holder = TestNode.await(pool.getConnection());
            TestNode.await(holder.query("BEGIN").execute());
            TestNode.await(holder.preparedQuery("SELECT 1 FROM tasks WHERE id = $1 FOR UPDATE")
                    .execute(Tuple.of(UUID.fromString(id))));

            // The handler returns after 300 ms; its end then waits for our lock.
            int blocked = waitForBlockedEnd(pool);
            first.kill(Duration.ofSeconds(30));
            // The dead node's sessions go too, the waiting end among them: it never commits.
            TestNode.await(pool.preparedQuery(
                            "SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = current_database() AND pid = $1")
                    .execute(Tuple.of(blocked)));
            TestNode.await(holder.query("ROLLBACK").execute());
            holder.close();
            Row row = TestNode.await(pool.preparedQuery("SELECT state, worker_id FROM tasks WHERE id = $1")
                            .execute(Tuple.of(UUID.fromString(id))))
                    .iterator()
                    .next();
            assertEquals("running", row.getString("state"), "the end was not journaled");
            assertTrue(row.getString("worker_id").startsWith(first.nodeId() + "/"));

            MutableClock clock = new MutableClock();
            clock.advance(Duration.ofSeconds(60));
            try (TestNode second = TestNode.start(db, CONFIG, clock)) {
                TestNode.await(second.node.passes().recovery().runOnce());
                JsonObject done = second.waitForState(id, "succeeded");
                List<JsonObject> history = events(done);
                assertEquals(
                        List.of("submitted", "claimed", "lease_expired", "claimed", "succeeded"),
                        reasons(done),
                        done::encode);
                assertTrue(history.get(1).getString("workerId").startsWith(first.nodeId() + "/"));
                assertTrue(history.get(3).getString("workerId").startsWith(second.node.nodeId() + "/"));
                assertEquals(2, done.getInteger("attempt"));
            }
        } finally {
            pool.close();
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }
}
