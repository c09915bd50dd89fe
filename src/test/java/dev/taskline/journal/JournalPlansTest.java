package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.TaskIds;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The statements that write a group of tasks by id must reach each task through the primary key
 * even when the table's statistics lie. Here they lie as they do on a new journal under a burst:
 * analysed while every task had finished, then 20,000 pending and 1,000 running tasks arrived. A
 * plan that trusts those statistics scans a partial index of every pending (or running) task for
 * each group.
 */
class JournalPlansTest {

    private static final int GROUP = 500;

    private static Vertx vertx;
    private static Pool pool;
    private static Sql sql;
    private static UUID[] pending;
    private static UUID[] running;

    @BeforeAll
    static void start() throws Exception {
        vertx = Vertx.vertx();
        PgConnectOptions options = JournalConnections.options(TestPostgres.newDatabase());
        pool = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(1))
                .connectingTo(options)
                .using(vertx)
                .build();
        await(Migrator.migrate(vertx, pool));
        sql = Sql.load("/sql/queries/tasks.sql", "/sql/queries/events.sql");
        String columns = "INSERT INTO tasks (id, queue, type, state, payload, run_at, created_at, updated_at, "
                + "worker_id, lease_version, lease_expires_at, finished_at) ";
        String id = "(lpad(to_hex(g), 8, '0') || '-0000-7000-8000-000000000000')::uuid";
        // The tables these rows land in (migration 000030): the unfinished ones', and the finished ones'
        // whose ids (from 1970) no unit covers.
        await(pool.query("ALTER TABLE tasks_live SET (autovacuum_enabled = false)")
                .execute());
        await(pool.query("ALTER TABLE tasks_done_default SET (autovacuum_enabled = false)")
                .execute());
        await(pool.query(columns + "SELECT " + id + ", 'q', 'sleep', 'succeeded', '{}', now(), now(), now(), "
                        + "NULL, 1, NULL, now() FROM generate_series(1, 200) g")
                .execute());
        await(pool.query("ANALYZE tasks").execute());
        await(pool.query(columns + "SELECT " + id + ", 'q', 'sleep', 'pending', '{}', now() - interval '1 minute', "
                        + "now(), now(), NULL, 0, NULL, NULL FROM generate_series(1001, 21000) g")
                .execute());
        await(pool.query(columns + "SELECT " + id + ", 'q', 'sleep', 'running', '{}', now(), now(), now(), "
                        + "'w', 1, now() + interval '1 hour', NULL FROM generate_series(30001, 31000) g")
                .execute());
        pending = ids("pending");
        running = ids("running");
    }

    private static UUID[] ids(String state) throws Exception {
        List<UUID> found = new ArrayList<>();
        for (Row row : await(pool.preparedQuery("SELECT id FROM tasks WHERE state = $1 ORDER BY id LIMIT $2")
                .execute(Tuple.of(state, GROUP)))) {
            found.add(row.getUUID("id"));
        }
        return found.toArray(new UUID[0]);
    }

    @AfterAll
    static void stop() throws Exception {
        await(pool.close());
        await(vertx.close());
    }

    private static String plan(String name, Tuple params) throws Exception {
        StringBuilder text = new StringBuilder();
        for (Row row : await(pool.preparedQuery("EXPLAIN " + sql.get(name)).execute(params))) {
            text.append(row.getString(0)).append('\n');
        }
        return text.toString();
    }

    /**
     * Each task of the group is found through the primary key of the unfinished tasks' table, and no
     * other table of tasks is read (migration 000030: the units of finished tasks are pruned). A hash
     * join of those probes' rows with the group is fine (the group's ids as an array, one index walk
     * or bitmap); a hash of a scan is not.
     */
    private static void assertByPrimaryKey(String plan) {
        assertTrue(
                plan.contains("Index Scan using tasks_pkey on tasks_live")
                        || (plan.contains("Bitmap Index Scan on tasks_pkey") && plan.contains("on tasks_live")),
                plan);
        assertFalse(plan.contains("tasks_pending_order") || plan.contains("tasks_running_lease"), plan);
        assertFalse(plan.contains("Seq Scan on tasks") || plan.contains("tasks_done"), plan);
    }

    private static <T> T[] filled(T[] array, T value) {
        Arrays.fill(array, value);
        return array;
    }

    private static OffsetDateTime now() {
        return OffsetDateTime.now(ZoneOffset.UTC);
    }

    @Test
    void a_claim_looks_each_task_up_by_id() throws Exception {
        assertByPrimaryKey(plan(
                "claim",
                sql.bound("claim", Params.Claim.class)
                        .bind(new Params.Claim(
                                pending,
                                filled(new Long[GROUP], 0L),
                                filled(new String[GROUP], "w"),
                                filled(new OffsetDateTime[GROUP], now().plusMinutes(1)),
                                now()))));
    }

    @Test
    void a_finish_looks_each_task_up_by_id() throws Exception {
        assertByPrimaryKey(plan(
                "finish",
                sql.bound("finish", Params.Finish.class)
                        .bind(new Params.Finish(
                                running,
                                filled(new Long[GROUP], 1L),
                                filled(new String[GROUP], "w"),
                                filled(new String[GROUP], "succeeded"),
                                filled(new String[GROUP], "{}"),
                                new String[GROUP],
                                filled(new String[GROUP], "succeeded"),
                                new OffsetDateTime[GROUP],
                                filled(new Integer[GROUP], 0),
                                filled(new Integer[GROUP], 0),
                                now(),
                                filled(new Boolean[GROUP], false),
                                filled(new Boolean[GROUP], false)))));
    }

    @Test
    void a_heartbeat_looks_each_task_up_by_id() throws Exception {
        assertByPrimaryKey(plan(
                "heartbeat",
                sql.bound("heartbeat", Params.Heartbeat.class)
                        .bind(new Params.Heartbeat(
                                running,
                                filled(new Long[GROUP], 1L),
                                filled(new String[GROUP], "w"),
                                filled(new OffsetDateTime[GROUP], now().plusMinutes(1)),
                                now()))));
    }

    @Test
    void a_progress_write_looks_each_task_up_by_id() throws Exception {
        assertByPrimaryKey(plan(
                "progress",
                sql.bound("progress", Params.Progress.class)
                        .bind(new Params.Progress(
                                running,
                                filled(new Long[GROUP], 1L),
                                filled(new String[GROUP], "w"),
                                filled(new Integer[GROUP], 50),
                                filled(new String[GROUP], "half"),
                                now()))));
    }

    @Test
    void the_deadline_sweep_reads_only_tasks_that_could_expire() throws Exception {
        String plan = plan("expire_overdue", sql.statement("expire_overdue").bind("now", now(), "most", 1000));
        assertTrue(plan.contains("tasks_pending_start_by"), plan);
        assertFalse(plan.contains("Seq Scan on tasks") || plan.contains("tasks_pending_order"), plan);
    }

    @Test
    void a_retention_pass_walks_the_primary_key_from_the_oldest_id() throws Exception {
        OffsetDateTime cutOff = now().plusHours(1);
        String plan = plan(
                "delete_finished",
                sql.statement("delete_finished")
                        .bind("cutoff", cutOff, "most", 1000, "least_id", TaskIds.least(cutOff.toInstant())));
        assertTrue(plan.contains("Index Scan using tasks_pkey on tasks"), plan);
        assertFalse(plan.contains("Seq Scan on tasks") || plan.contains("Seq Scan on task_events"), plan);
    }

    @Test
    void a_flows_page_probes_each_tasks_parents_by_key_when_one_child_has_thousands() throws Exception {
        // A chord's then: thousands of edges into one child, so the statistics give every child
        // thousands of parents. A page of another flow must still probe each parent by key, not hash
        // every task for each of its rows, or merge-joined them in a walk of the whole primary key (past
        // the statement timeout on a journal of a few chords).
        await(pool.query("INSERT INTO task_edges (parent_id, child_id) SELECT id, '" + running[0]
                        + "'::uuid FROM tasks WHERE state = 'pending'")
                .execute());
        await(pool.query("ANALYZE task_edges").execute());
        Sql flows = Sql.load("/sql/queries/flows.sql");
        assertProbesParents(
                flows,
                "flow_tasks",
                flows.bound("flow_tasks", Params.FlowTasks.class)
                        .bind(new Params.FlowTasks(running[1], null, 1000, 65536, 1 << 20)));
        // So must a chain step's read of its parent, and a page of a child's parents.
        assertProbesParents(
                flows, "flow_parents", flows.statement("flow_parents").bind("id", running[1], "max_bytes", 1L << 20));
        assertProbesParents(
                flows,
                "flow_parents_page",
                flows.statement("flow_parents_page")
                        .bind("id", running[1], "after", null, "most", 1000, "max_bytes", 1L << 20));
    }

    private static void assertProbesParents(Sql flows, String name, Tuple params) throws Exception {
        StringBuilder text = new StringBuilder();
        for (Row row : await(pool.preparedQuery("EXPLAIN " + flows.get(name)).execute(params))) {
            text.append(row.getString(0)).append('\n');
        }
        String plan = text.toString();
        assertTrue(plan.contains("Index Cond: (id = e.parent_id)"), name + "\n" + plan);
        assertFalse(
                plan.contains("Seq Scan on tasks") || plan.contains("Hash Join") || plan.contains("Merge Join"),
                name + "\n" + plan);
    }
}
