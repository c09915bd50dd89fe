package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.TaskIds;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicReference;
import org.junit.jupiter.api.Test;

/**
 * A journal of the previous layout (migrations up to 000027) taken to the partitioned one (000028 to
 * 000030) while a writer of the previous release's kind goes on submitting: the rows it holds stay
 * where they are (the legacy tables, attached whole), every task is read as before and the waiting
 * ones run, and the rows created past the legacy bound take the new layout.
 */
class PartitionedUpgradeTest {

    /** What the previous release's insert_tasks wrote for a task submitted alone, in one statement. */
    private static final String SUBMIT = "WITH ins AS ("
            + " INSERT INTO tasks (id, queue, type, state, payload, run_at, created_at, updated_at, max_attempts)"
            + " VALUES ($1, 'default', 'sleep', 'pending', '{}', $2, $2, $2, 3) RETURNING id)"
            + " INSERT INTO task_events (task_id, from_state, to_state, reason, lease_version, attempt, at)"
            + " SELECT id, NULL, 'pending', 'submitted', 0, 0, $2 FROM ins";

    @Test
    void a_journal_of_the_previous_layout_migrates_under_writes_and_every_task_goes_on() throws Exception {
        String url = TestPostgres.newDatabase();
        Vertx vertx = Vertx.vertx();
        Pool pool = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(2))
                .connectingTo(PgUrl.parse(url))
                .using(vertx)
                .build();
        try {
            await(Migrator.migrate(vertx, pool, 27));
            OffsetDateTime then = OffsetDateTime.now(ZoneOffset.UTC);
            // A year's history in small: finished tasks with their events, and some waiting.
            String finished = "(lpad(to_hex(g), 8, '0') || '-0000-7000-8000-000000000000')::uuid";
            await(pool.preparedQuery("INSERT INTO tasks (id, queue, type, state, payload, result, run_at, attempt,"
                            + " created_at, updated_at, started_at, finished_at) SELECT " + finished
                            + ", 'default', 'sleep', 'succeeded', '{}', '{}', $1, 1, $1, $1, $1, $1"
                            + " FROM generate_series(1, 200) g")
                    .execute(Tuple.of(then)));
            await(pool.preparedQuery("INSERT INTO task_events (task_id, from_state, to_state, reason, attempt, at)"
                            + " SELECT " + finished + ", s.f, s.t, s.r, 1, $1 FROM generate_series(1, 200) g,"
                            + " (VALUES (NULL, 'pending', 'submitted'), ('pending', 'running', 'claimed'),"
                            + " ('running', 'succeeded', 'succeeded')) AS s(f, t, r)")
                    .execute(Tuple.of(then)));
            List<UUID> waiting = new ArrayList<>();
            for (int i = 0; i < 20; i++) {
                UUID id = TaskIds.next(Clock.systemUTC());
                await(pool.preparedQuery(SUBMIT).execute(Tuple.of(id, then)));
                waiting.add(id);
            }

            // The previous release's node goes on submitting while the new one migrates.
            AtomicBoolean stop = new AtomicBoolean();
            AtomicInteger written = new AtomicInteger();
            AtomicReference<Throwable> failed = new AtomicReference<>();
            List<UUID> submitted = java.util.Collections.synchronizedList(new ArrayList<>());
            Thread writer = new Thread(() -> {
                while (!stop.get() && failed.get() == null) {
                    UUID id = TaskIds.next(Clock.systemUTC());
                    try {
                        await(pool.preparedQuery(SUBMIT).execute(Tuple.of(id, OffsetDateTime.now(ZoneOffset.UTC))));
                        submitted.add(id);
                        written.incrementAndGet();
                    } catch (Exception e) {
                        failed.set(e);
                    }
                }
            });
            writer.start();
            // The new release's clock is past the legacy bound (at most two days ahead): what it
            // makes takes the new layout.
            MutableClock clock = MutableClock.afterEveryId();
            clock.advance(Duration.ofDays(3));
            try (TestNode node = TestNode.start(url, "{\"queues\": {\"default\": {\"slots\": 4}}}", clock)) {
                stop.set(true);
                writer.join();
                assertEquals(null, failed.get(), "the previous release's writes went on through the migration");
                assertTrue(written.get() > 0, "it wrote while the journal migrated");

                JsonObject old = node.getJson("/api/tasks/00000007-0000-7000-8000-000000000000");
                assertEquals("succeeded", old.getString("state"));
                assertEquals(3, old.getJsonArray("history").size(), old.encode());
                waiting.addAll(submitted);
                // The writer's tasks came behind the node's back (no notification, as a node of the
                // previous release sends none to this one): the node finds them in the journal.
                await(node.node.passes().recovery().runOnce());
                for (UUID id : waiting) {
                    node.waitForState(id.toString(), "succeeded");
                }
                String fresh = node.post("/api/tasks", new JsonObject().put("type", "sleep"))
                        .bodyAsJsonObject()
                        .getString("id");
                node.waitForState(fresh, "succeeded");

                assertEquals(
                        "tasks_legacy",
                        table(pool, "SELECT tableoid::regclass::text AS t FROM tasks WHERE id = $1", waiting.get(0)));
                assertTrue(
                        table(
                                        pool,
                                        "SELECT tableoid::regclass::text AS t FROM tasks WHERE id = $1",
                                        UUID.fromString(fresh))
                                .startsWith("tasks_done_"),
                        "a task made past the bound ended in its unit");
                assertEquals(
                        200L + waiting.size() + 1,
                        await(pool.query("SELECT count(*) AS n FROM tasks").execute())
                                .iterator()
                                .next()
                                .getLong("n"));
                assertEquals(
                        5,
                        node.getJson("/api/tasks?state=succeeded&limit=5")
                                .getJsonArray("tasks")
                                .size());
            }
        } finally {
            await(pool.close());
            await(vertx.close());
        }
    }

    private static String table(Pool pool, String sql, UUID id) throws Exception {
        return await(pool.preparedQuery(sql).execute(Tuple.of(id)))
                .iterator()
                .next()
                .getString("t");
    }
}
