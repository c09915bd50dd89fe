package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.taskline.model.Insert;
import dev.taskline.model.Lease;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.model.TaskState;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every write of a task's life is prepared once per connection, not parsed and planned at each
 * execution: the client caches a statement only when its filter lets the text through, and a long
 * statement once fell out of the cache without a sign.
 */
class PreparedStatementsTest {

    private static Vertx vertx;
    private static Pool pool;
    private static Pool insertPool;
    private static Journal journal;
    private static final MutableClock CLOCK = new MutableClock();

    @BeforeAll
    static void start() throws Exception {
        vertx = Vertx.vertx();
        String url = TestPostgres.newDatabase();
        // One connection each, so that what a statement left prepared is seen by the next query.
        pool = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(1))
                .connectingTo(JournalConnections.options(url))
                .using(vertx)
                .build();
        insertPool = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(1))
                .connectingTo(JournalConnections.insertOptions(url))
                .using(vertx)
                .build();
        await(Migrator.migrate(vertx, pool));
        journal = new Journal(pool, insertPool, CLOCK, (statement, nanos) -> {}, Integer.MAX_VALUE, 1);
    }

    @AfterAll
    static void stop() throws Exception {
        await(pool.close());
        await(insertPool.close());
        await(vertx.close());
    }

    @Test
    void the_writes_of_a_task_are_prepared_once() throws Exception {
        for (int round = 0; round < 2; round++) {
            UUID id = TaskIds.next(CLOCK);
            await(journal.insert(List.of(Insert.waiting(
                    Task.builder(id, "default", "sleep").runAt(CLOCK.instant()).build()))));
            Lease lease = await(journal.claim(id, 0, "w1", Duration.ofSeconds(30)));
            assertNotNull(lease);
            assertNotNull(await(journal.heartbeat(lease, Duration.ofSeconds(30))));
            assertEquals(true, await(journal.progress(lease, 50, "half")));
            assertEquals(TaskState.SUCCEEDED, await(journal.succeed(lease, new JsonObject().put("n", round))));
        }
        Sql sql = Sql.queries();
        List<String> here = prepared(pool);
        for (String name : List.of("claim", "heartbeat", "progress", "finish")) {
            assertEquals(
                    1, here.stream().filter(text -> text.equals(sql.get(name))).count(), name + " in " + here);
        }
        List<String> inserts = prepared(insertPool);
        assertEquals(
                1,
                inserts.stream()
                        .filter(text -> text.equals(sql.get("insert_tasks")))
                        .count(),
                "insert_tasks in " + inserts);
    }

    @Test
    void inserts_run_on_generic_plans_and_the_rest_on_custom_ones() throws Exception {
        assertEquals("force_custom_plan", setting(pool));
        assertEquals("force_generic_plan", setting(insertPool));
    }

    private static List<String> prepared(Pool on) throws Exception {
        List<String> texts = new ArrayList<>();
        for (Row row :
                await(on.query("SELECT statement FROM pg_prepared_statements").execute())) {
            texts.add(row.getString("statement"));
        }
        return texts;
    }

    private static String setting(Pool on) throws Exception {
        return await(on.query("SHOW plan_cache_mode").execute())
                .iterator()
                .next()
                .getString(0);
    }
}
