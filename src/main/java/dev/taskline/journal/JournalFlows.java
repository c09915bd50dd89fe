package dev.taskline.journal;

import dev.taskline.model.BlockedCounts;
import dev.taskline.model.FlowInsert;
import dev.taskline.model.FlowRecord;
import dev.taskline.model.FlowTaskView;
import dev.taskline.model.Lease;
import dev.taskline.model.Parents;
import dev.taskline.model.ParentsPage;
import dev.taskline.model.Reason;
import dev.taskline.model.Spawn;
import dev.taskline.model.Task;
import dev.taskline.model.TaskState;
import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Flows (migration 000017): a graph of tasks journaled in one statement, read back as a whole, and
 * cancelled or retried as a whole. The settling of children as their parents end is not here: it
 * happens in the statements that end tasks (see flow_settle), so that no end can commit without
 * it.
 */
public final class JournalFlows {

    /** Flows of at most this many tasks share a statement with others (see insert). */
    private static final int GROUPED_TASKS = 100;

    private static final int MAX_GROUP = 200;

    private final Journal journal;
    private final Pool pool;
    /** Where the list of flows is read: a read replica's pool, or the same one. */
    private final Pool behind;

    private final Sql sql;
    private final Clock clock;
    private final Sql.Bound<Params.InsertFlow> insertFlow;
    private final GroupCommit<FlowInsert, Void> inserts;
    private final Sql.Bound<Params.ListTenantFlows> listTenantFlows;
    private final Sql.Bound<Params.FlowTasks> flowTasks;
    private final Sql.Bound<Params.FlowSpawn> flowSpawn;

    public JournalFlows(Journal journal) {
        this(journal, journal.pool());
    }

    /** @param behind where the list of flows is read: a read replica's pool (it may lag), or the journal's */
    public JournalFlows(Journal journal, Pool behind) {
        this.journal = journal;
        this.pool = journal.pool();
        this.behind = behind;
        this.sql = Sql.queries();
        this.clock = journal.clock();
        this.insertFlow = sql.bound("insert_flow", Params.InsertFlow.class);
        this.inserts = new GroupCommit<>(MAX_GROUP, this::insertAll);
        this.listTenantFlows = sql.bound("list_tenant_flows", Params.ListTenantFlows.class);
        this.flowTasks = sql.bound("flow_tasks", Params.FlowTasks.class);
        this.flowSpawn = sql.bound("flow_spawn", Params.FlowSpawn.class);
    }

    /**
     * Journals a whole flow, all or nothing. Small flows arriving together share a statement and its
     * commit, as new tasks do: one statement a flow held many small flows to the commits one
     * connection could make (about 500 flows of six a second). A large flow goes alone, so that no
     * statement carries more than about {@code MAX_GROUP * GROUPED_TASKS} tasks.
     */
    public Future<Void> insert(FlowInsert flow) {
        return flow.tasks().size() > GROUPED_TASKS ? insertAll(List.of(flow)).mapEmpty() : inserts.submit(flow);
    }

    /** Journals {@code flows} in one statement, each whole; package-private for its test. */
    Future<List<Void>> insertAll(List<FlowInsert> flows) {
        OffsetDateTime now = now();
        return guard(pool.preparedQuery(insertFlow.text()).execute(insertFlow.bind(params(flows, now))))
                .map(rows -> {
                    List<UUID> ids = new ArrayList<>();
                    flows.forEach(flow -> ids.addAll(ids(flow)));
                    journal.changed(ids);
                    return Collections.nCopies(flows.size(), (Void) null);
                });
    }

    /**
     * Journals a whole flow under an Idempotency-Key, in one transaction with the key and {@code
     * answer}; when another request holds the key, journals nothing and returns what that request
     * stored.
     *
     * @return null when this request took the key and its flow is journaled
     */
    public Future<JsonObject> insertIdempotent(
            String key, String requestHash, FlowInsert flow, JsonObject answer, Duration keepFor) {
        OffsetDateTime now = now();
        return journal.underKey(
                        key,
                        requestHash,
                        answer,
                        keepFor,
                        now,
                        conn -> conn.preparedQuery(insertFlow.text())
                                .execute(insertFlow.bind(params(List.of(flow), now))))
                .compose(inserted -> {
                    if (inserted) {
                        journal.changed(ids(flow));
                        return Future.succeededFuture((JsonObject) null);
                    }
                    return storedAnswer(key);
                });
    }

    /**
     * What was stored under a live Idempotency-Key: {@code requestHash} and {@code answer}; an empty
     * object when there is none.
     */
    public Future<JsonObject> storedAnswer(String key) {
        return journal.idempotencyRow(key)
                .map(row -> row == null
                        ? new JsonObject()
                        : new JsonObject()
                                .put("requestHash", row.getString("request_hash"))
                                .put("answer", row.getValue("response")));
    }

    /**
     * A task as what it spawns needs it: its flow, key and tenant (a remote worker's task, which
     * this node may not hold). Null for no such task.
     */
    public Future<Task> spawner(UUID taskId) {
        Sql.Statement read = sql.statement("task_flow");
        return guard(pool.preparedQuery(read.text()).execute(read.bind("id", taskId)))
                .map(rows -> {
                    if (rows.size() == 0) {
                        return null;
                    }
                    Row row = rows.iterator().next();
                    return Task.builder(taskId, row.getString("queue"), row.getString("type"))
                            .flow(row.getUUID("flow_id"))
                            .flowKey(row.getString("flow_key"))
                            .tenant(row.getString("tenant"))
                            .build();
                });
    }

    /**
     * Ends {@code lease}'s attempt succeeded with {@code result} and adds {@code spawn}'s tasks to its
     * flow, in one transaction fenced by the lease: both land, or (the lease lost) neither. A key
     * the flow already has fails it whole with {@link InvalidTaskException}. Answers the state it
     * ended in (null: fenced), as {@link Journal#succeed} does; with {@code cancelWins} a cancel
     * asked meanwhile wins over the success (a remote worker's, which cannot have known of it).
     */
    public Future<TaskState> succeedSpawning(Lease lease, JsonObject result, Spawn spawn, boolean cancelWins) {
        OffsetDateTime now = now();
        GroupedWrites.FinishRequest finish = new GroupedWrites.FinishRequest(
                lease, TaskState.SUCCEEDED, result, null, Reason.SUCCEEDED, null, Attempts.COUNTED, cancelWins);
        return guard(pool.withTransaction(conn -> conn.preparedQuery(flowSpawn.text())
                        .execute(flowSpawn.bind(spawnParams(lease, spawn, now)))
                        .compose(rows -> {
                            Row row = rows.iterator().next();
                            if (row.getBoolean("held") && row.getInteger("spawned") == 0) {
                                // The flow's budget refused it: the transaction ends, nothing of it kept.
                                return Future.failedFuture(overBudget(spawn, row));
                            }
                            // Nothing spawned for a lost lease: the finish is fenced too, and says so.
                            return journal.grouped().finishOn(conn, finish);
                        })))
                .map(done -> {
                    done.tell();
                    return done.states().get(0);
                })
                .recover(e -> Future.failedFuture(
                        e instanceof io.vertx.pgclient.PgException pg && "23505".equals(pg.getSqlState())
                                ? new InvalidTaskException(
                                        "spawn: the flow already has a task of one of the keys " + spawn.keys())
                                : e));
    }

    private static InvalidTaskException overBudget(Spawn spawn, Row row) {
        Spawn.Budget budget = spawn.budget();
        String what;
        if (row.getInteger("size") > budget.maxTasks()) {
            what = row.getInteger("size") + " tasks, past flows.maxTasks (" + budget.maxTasks() + ")";
        } else if (row.getLong("edges") > budget.maxEdges()) {
            what = row.getLong("edges") + " dependsOn edges, past the " + budget.maxEdges()
                    + " a flow may have (each task that waits for the spawner waits for every spawned task"
                    + " no other depends on)";
        } else {
            what = "a task waiting for " + row.getLong("parents") + " parents, past the " + budget.maxParents()
                    + " a task may wait for";
        }
        return new InvalidTaskException("spawn: " + spawn.tasks().size() + " more tasks would give the flow " + what);
    }

    private static Params.FlowSpawn spawnParams(Lease lease, Spawn spawn, OffsetDateTime now) {
        FlowColumns c = new FlowColumns(spawn.tasks(), spawn.edges());
        return new Params.FlowSpawn(
                spawn.spawner(),
                lease.version(),
                lease.workerId(),
                now,
                spawn.flowId(),
                c.ids,
                c.keys,
                c.queues,
                c.types,
                c.payloads,
                c.priorities,
                spawn.delaysMs().toArray(new Long[0]),
                c.maxAttempts,
                c.timeoutMs,
                c.concurrencyKeys,
                c.startWithinMs,
                c.joins,
                c.parentsLeft,
                c.edgeParents,
                c.edgeChildren,
                spawn.tails().toArray(new UUID[0]),
                spawn.budget().maxTasks(),
                spawn.budget().maxEdges(),
                spawn.budget().maxParents());
    }

    /** How many tasks wait blocked in the whole journal, and how many of each tenant in each queue. */
    public Future<BlockedCounts> blockedCount() {
        Sql.Statement count = sql.statement("blocked_count");
        return guard(pool.preparedQuery(count.text()).execute()).map(rows -> {
            long total = 0;
            Map<String, Map<String, Integer>> byQueue = new HashMap<>();
            for (Row row : rows) {
                long n = row.getLong("blocked");
                total += n;
                String tenant = row.getString("tenant");
                if (tenant != null) {
                    byQueue.computeIfAbsent(row.getString("queue"), q -> new HashMap<>())
                            .put(tenant, (int) Math.min(n, Integer.MAX_VALUE));
                }
            }
            return new BlockedCounts(total, byQueue);
        });
    }

    public Future<FlowRecord> get(UUID id) {
        Sql.Statement get = sql.statement("get_flow");
        return guard(pool.preparedQuery(get.text()).execute(get.bind("id", id)))
                .map(rows -> rows.size() == 0 ? null : flow(rows.iterator().next()));
    }

    /**
     * A page of the flow's tasks, in the order they were given, after task {@code after} (null: from
     * the first), at most {@code most}, each with the keys it depends on; its result and error
     * unless one weighs more than {@code maxInline} or those shown would pass {@code maxPage}.
     */
    public Future<List<FlowTaskView>> tasks(UUID id, UUID after, int most, long maxInline, long maxPage) {
        return guard(pool.preparedQuery(flowTasks.text())
                        .execute(flowTasks.bind(new Params.FlowTasks(id, after, most, maxInline, maxPage))))
                .map(rows -> {
                    List<FlowTaskView> found = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        String[] dependsOn = row.getArrayOfStrings("depends_on");
                        found.add(new FlowTaskView(
                                row.getString("flow_key"),
                                row.getUUID("id"),
                                row.getString("queue"),
                                row.getString("type"),
                                TaskState.parse(row.getString("state")),
                                row.getString("join_mode"),
                                dependsOn == null ? List.of() : Arrays.asList(dependsOn),
                                row.getInteger("attempt"),
                                row.getValue("result"),
                                row.getValue("error"),
                                row.getString("tenant"),
                                row.getLong("result_bytes"),
                                row.getLong("error_bytes")));
                    }
                    return found;
                });
    }

    /** How many of the flow's tasks are in each state (every state, 0 for none). */
    public Future<Map<TaskState, Integer>> stateCounts(UUID id) {
        Sql.Statement counts = sql.statement("flow_state_counts");
        return guard(pool.preparedQuery(counts.text()).execute(counts.bind("id", id)))
                .map(rows -> {
                    Map<TaskState, Integer> byState = new java.util.EnumMap<>(TaskState.class);
                    for (TaskState state : TaskState.values()) {
                        byState.put(state, 0);
                    }
                    rows.forEach(row -> byState.put(TaskState.parse(row.getString("state")), row.getInteger("n")));
                    return byState;
                });
    }

    /** A page of flows, newest first, after {@code after} (exclusive); of one tenant unless it is null. */
    public Future<List<FlowRecord>> list(String state, String name, UUID after, int limit, String tenant) {
        Future<RowSet<Row>> rows;
        if (tenant == null) {
            Sql.Statement list = sql.statement("list_flows");
            rows = behind.preparedQuery(list.text())
                    .execute(list.bind("state", state, "name", name, "after", after, "most", limit));
        } else {
            rows = behind.preparedQuery(listTenantFlows.text())
                    .execute(listTenantFlows.bind(new Params.ListTenantFlows(state, name, after, limit, tenant)));
        }
        return JournalFailures.guardReplica(rows).map(found -> {
            List<FlowRecord> flows = new ArrayList<>(found.size());
            found.forEach(row -> flows.add(flow(row)));
            return flows;
        });
    }

    /** The flow's tasks in one of {@code states}, in id order: what a cancel or retry of the whole flow acts on. */
    public Future<List<UUID>> taskIds(UUID flow, String... states) {
        Sql.Statement read = sql.statement("flow_task_ids");
        return guard(pool.preparedQuery(read.text()).execute(read.bind("id", flow, "states", states)))
                .map(rows -> {
                    List<UUID> ids = new ArrayList<>(rows.size());
                    rows.forEach(row -> ids.add(row.getUUID("id")));
                    return ids;
                });
    }

    /**
     * What the parents of {@code taskId} ended with, for it to read as it starts: inline when their
     * results and errors weigh at most {@code maxBytes} together, else only how many and how much
     * (a reference: the task reads them in pages, see {@link #parentsPage}), none of them read.
     */
    public Future<Parents> parents(UUID taskId, long maxBytes) {
        Sql.Statement read = sql.statement("flow_parents");
        return guard(pool.preparedQuery(read.text()).execute(read.bind("id", taskId, "max_bytes", maxBytes)))
                .map(rows -> {
                    Row row = rows.iterator().next();
                    int count = row.getInteger("parents");
                    if (count == 0) {
                        return Parents.NONE;
                    }
                    return new Parents(
                            count,
                            row.getLong("bytes"),
                            row.getString("parent_values"),
                            row.getString("parent_states"));
                });
    }

    /**
     * What {@link #parents} answers, for the attempt of a task made ready at {@code readyVersion}
     * that starts here: what the journal handed over as it made the child ready, when it did (see
     * {@link HandedParents}), else read.
     */
    public Future<Parents> parentsAtStart(UUID taskId, long readyVersion, long maxBytes) {
        Parents handed = journal.handedParents().take(taskId, readyVersion);
        if (handed == null) {
            return parents(taskId, maxBytes);
        }
        return Future.succeededFuture(
                handed.bytes() <= maxBytes ? handed : new Parents(handed.count(), handed.bytes(), null, null));
    }

    /**
     * A page of what the parents of {@code taskId} ended with, after key {@code after} (null: from the
     * first), at most {@code most} of them and, past the first, at most {@code maxBytes} of values;
     * null when there is no such task.
     */
    public Future<ParentsPage> parentsPage(UUID taskId, String after, int most, long maxBytes) {
        Sql.Statement read = sql.statement("flow_parents_page");
        return guard(pool.preparedQuery(read.text())
                        .execute(read.bind("id", taskId, "after", after, "most", most, "max_bytes", maxBytes)))
                .map(rows -> {
                    if (rows.size() == 0) {
                        return null;
                    }
                    String tenant = null;
                    String queue = null;
                    int fetched = 0;
                    List<ParentsPage.Item> items = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        tenant = row.getString("tenant");
                        queue = row.getString("queue");
                        fetched = row.getInteger("fetched");
                        if (row.getString("flow_key") != null) {
                            items.add(new ParentsPage.Item(
                                    row.getString("flow_key"),
                                    TaskState.parse(row.getString("state")),
                                    row.getString("value")));
                        }
                    }
                    // Cut by the bytes, or a full page (there may be more): the next page starts after this one.
                    String next = !items.isEmpty() && (items.size() < fetched || fetched == most)
                            ? items.get(items.size() - 1).key()
                            : null;
                    return new ParentsPage(taskId, tenant, queue, items, next);
                });
    }

    /** Puts back to blocked what the retried tasks' failures cancelled, and counts their flows anew. */
    static Future<Void> reblock(SqlConnection conn, Sql sql, List<Task> retried, OffsetDateTime now) {
        List<UUID> ids = new ArrayList<>();
        List<UUID> flows = new ArrayList<>();
        for (Task task : retried) {
            if (task.flowId() != null) {
                ids.add(task.id());
                if (!flows.contains(task.flowId())) {
                    flows.add(task.flowId());
                }
            }
        }
        if (ids.isEmpty()) {
            return Future.succeededFuture();
        }
        Sql.Statement reblock = sql.statement("flow_reblock");
        Sql.Statement lock = sql.statement("flow_lock");
        Sql.Statement recount = sql.statement("flow_recount");
        UUID[] flowIds = flows.toArray(new UUID[0]);
        return conn.preparedQuery(reblock.text())
                .execute(reblock.bind("ids", ids.toArray(new UUID[0]), "now", now))
                // Locked before they are counted, so that the count sees every end committed before it.
                .compose(v -> conn.preparedQuery(lock.text()).execute(lock.bind("ids", flowIds)))
                .compose(v -> conn.preparedQuery(recount.text()).execute(recount.bind("ids", flowIds)))
                .mapEmpty();
    }

    private static FlowRecord flow(Row row) {
        return new FlowRecord(
                row.getUUID("id"),
                row.getString("name"),
                row.getString("tenant"),
                row.getInteger("size"),
                row.getInteger("unfinished"),
                row.getInteger("failed"),
                row.getInteger("cancelled"),
                row.getString("state"),
                Rows.instant(row, "created_at"),
                Rows.instant(row, "finished_at"));
    }

    private static List<UUID> ids(FlowInsert flow) {
        List<UUID> ids = new ArrayList<>(flow.tasks().size());
        flow.tasks().forEach(node -> ids.add(node.insert().task().id()));
        return ids;
    }

    private static Params.InsertFlow params(List<FlowInsert> flows, OffsetDateTime now) {
        int f = flows.size();
        UUID[] flowIds = new UUID[f];
        String[] names = new String[f];
        String[] tenants = new String[f];
        Integer[] sizes = new Integer[f];
        Integer[] edgeCounts = new Integer[f];
        UUID[] firstIds = new UUID[f];
        UUID[] lastIds = new UUID[f];
        List<FlowInsert.Node> tasks = new ArrayList<>();
        List<FlowInsert.Edge> edges = new ArrayList<>();
        List<UUID> taskFlows = new ArrayList<>();
        List<String> taskTenants = new ArrayList<>();
        for (int k = 0; k < f; k++) {
            FlowInsert flow = flows.get(k);
            flowIds[k] = flow.id();
            names[k] = flow.name();
            tenants[k] = flow.tenant();
            sizes[k] = flow.tasks().size();
            edgeCounts[k] = flow.edges().size();
            firstIds[k] = flow.tasks().get(0).insert().task().id();
            lastIds[k] = flow.tasks().get(sizes[k] - 1).insert().task().id();
            tasks.addAll(flow.tasks());
            edges.addAll(flow.edges());
            taskFlows.addAll(Collections.nCopies(sizes[k], flow.id()));
            taskTenants.addAll(Collections.nCopies(sizes[k], flow.tenant()));
        }
        FlowColumns c = new FlowColumns(tasks, edges);
        return new Params.InsertFlow(
                flowIds,
                names,
                tenants,
                sizes,
                edgeCounts,
                firstIds,
                lastIds,
                now,
                c.ids,
                taskFlows.toArray(UUID[]::new),
                taskTenants.toArray(String[]::new),
                c.keys,
                c.queues,
                c.types,
                c.payloads,
                c.priorities,
                c.runAt,
                c.maxAttempts,
                c.timeoutMs,
                c.workerIds,
                c.leaseExpiresAt,
                c.concurrencyKeys,
                c.startBy,
                c.startWithinMs,
                c.joins,
                c.parentsLeft,
                c.edgeParents,
                c.edgeChildren);
    }

    private static <T> Future<T> guard(Future<T> future) {
        return JournalFailures.guard(future);
    }

    private OffsetDateTime now() {
        return Times.utc(clock.instant());
    }
}
