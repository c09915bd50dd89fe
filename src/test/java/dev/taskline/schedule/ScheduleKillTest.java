package dev.taskline.schedule;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.ChildNode;
import dev.taskline.testing.ChildNodeTest;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Black-box, on the real clock: two nodes (child JVMs) on one PostgreSQL evaluate a schedule every
 * second; one is killed with SIGKILL and started again. Every tick from the first to the last gets
 * exactly one task (none twice, none missing), and nothing fires once the schedule is deleted. The
 * waits are on the journal (so many ticks decided), never on time.
 */
class ScheduleKillTest extends ChildNodeTest {

    private static final String CONFIG = """
      {"queues": {"default": {"slots": 4}}}
      """;

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void a_schedule_every_second_gives_one_task_per_tick_across_a_kill_and_restart_and_none_after_delete()
            throws Exception {
        String db = TestPostgres.newDatabase();
        Map<String, String> env = childEnv(CONFIG);
        env.put("TASKLINE_PG_URL", db);
        ChildNode a = startChild("a", env);
        ChildNode b = startChild("b", env);
        Vertx vertx = Vertx.vertx();
        Pool pool = journalPool(vertx, db);
        try {
            JsonObject schedule = new JsonObject()
                    .put("name", "beat")
                    .put("every", "PT1S")
                    .put("catchUp", "all")
                    .put("task", new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0)));
            assertEquals(201, a.post("/api/schedules", schedule).statusCode());
            long before = awaitTasks(pool, "beat", 3, a);

            a.kill(Duration.ofSeconds(30));
            long afterKill = awaitTasks(pool, "beat", before + 4, b);

            ChildNode again = startChild("a-again", env);
            awaitTasks(pool, "beat", afterKill + 4, again);

            assertEquals(204, b.delete("/api/schedules/beat").statusCode());
            Instant deletedAt = Instant.now();
            // Both nodes evaluate every schedule in each pass: once a schedule made after the delete has
            // fired twice, each node has had its passes past the delete.
            assertEquals(
                    201,
                    again.post("/api/schedules", schedule.copy().put("name", "canary"))
                            .statusCode());
            awaitTasks(pool, "canary", 2, b);

            List<Row> perTick = new ArrayList<>();
            pool.preparedQuery("SELECT scheduled_for, count(*) AS n FROM tasks WHERE schedule = $1"
                            + " GROUP BY scheduled_for ORDER BY scheduled_for")
                    .execute(Tuple.of("beat"))
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(30, TimeUnit.SECONDS)
                    .forEach(perTick::add);
            Instant first = perTick.get(0).getOffsetDateTime("scheduled_for").toInstant();
            Instant last = perTick.get(perTick.size() - 1)
                    .getOffsetDateTime("scheduled_for")
                    .toInstant();
            List<String> problems = new ArrayList<>();
            for (int i = 0; i < perTick.size(); i++) {
                Instant tick = perTick.get(i).getOffsetDateTime("scheduled_for").toInstant();
                if (!tick.equals(first.plusSeconds(i))) {
                    problems.add("tick " + first.plusSeconds(i) + " has no task (next one: " + tick + ")");
                    break;
                }
                if (perTick.get(i).getLong("n") != 1) {
                    problems.add("tick " + tick + " has " + perTick.get(i).getLong("n") + " tasks");
                }
            }
            assertTrue(problems.isEmpty(), problems + "\n--- b ---\n" + b.log());
            assertTrue(!last.isAfter(deletedAt), "a tick at " + last + " fired after the delete at " + deletedAt);
            assertTrue(perTick.size() >= before + 8, perTick.size() + " ticks");
            System.err.printf("schedule 'beat': %d ticks from %s to %s, one task each%n", perTick.size(), first, last);
            // Every one of them ran once, whichever node made it and whether or not it was killed meanwhile.
            pollTerminal(pool, b);
        } finally {
            await(pool.close());
            await(vertx.close());
        }
    }

    /** Waits until schedule {@code name} has made at least {@code n} tasks; returns how many it has. */
    private static long awaitTasks(Pool pool, String name, long n, ChildNode node) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(90).toNanos();
        while (true) {
            long count = count(pool, "SELECT count(*) AS n FROM tasks WHERE schedule = $1", name);
            if (count >= n) {
                return count;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError(
                        name + " made " + count + " tasks, not " + n + "\n--- " + node.name + " ---\n" + node.log());
            }
            pause(50); // polling the journal is the signal; the pause only keeps it from spinning
        }
    }

    private static void pollTerminal(Pool pool, ChildNode node) throws Exception {
        long deadline = System.nanoTime() + Duration.ofSeconds(60).toNanos();
        long left;
        while ((left = count(
                        pool, "SELECT count(*) AS n FROM tasks WHERE schedule = $1 AND state <> 'succeeded'", "beat"))
                > 0) {
            if (System.nanoTime() > deadline) {
                throw new AssertionError(left + " tasks of 'beat' did not succeed\n" + node.log());
            }
            pause(50);
        }
    }

    private static long count(Pool pool, String sql, String name) throws Exception {
        return pool.preparedQuery(sql)
                .execute(Tuple.of(name))
                .toCompletionStage()
                .toCompletableFuture()
                .get(30, TimeUnit.SECONDS)
                .iterator()
                .next()
                .getLong("n");
    }
}
