package dev.taskline.journal;

import dev.taskline.model.BatchView;
import dev.taskline.model.Event;
import dev.taskline.model.EventPage;
import dev.taskline.model.LeaseState;
import dev.taskline.model.OmittedResult;
import dev.taskline.model.Progress;
import dev.taskline.model.Reason;
import dev.taskline.model.TaskSnapshot;
import dev.taskline.model.TaskState;
import dev.taskline.model.TaskView;
import dev.taskline.model.TenantCounts;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collection;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * What readers of the journal see: tasks and batches for the API, snapshots and events for
 * streams. Each read is one statement (a task with its history, two) and answers with records;
 * the rows and their column names stay here. Nothing here writes.
 */
public final class JournalReads {

    private final Pool pool;
    /** Where the reads that may be a little behind go: a read replica's pool, or the same one. */
    private final Pool behind;

    private final Sql sql;
    private final Sql.Bound<Params.ListTasks> listTasks;
    private final Sql.Bound<Params.StreamEvents> streamEvents;
    private final Sql.Bound<Params.ListTenantTasks> listTenantTasks;

    /** What a stream's snapshot shows inline: see {@link dev.taskline.config.TasklineConfig.Http#maxInlineBytes}. */
    private final long maxInlineBytes;

    private final long maxPageBytes;

    public JournalReads(Pool pool) {
        this(
                pool,
                pool,
                dev.taskline.config.TasklineConfig.Http.DEFAULT_MAX_INLINE_BYTES,
                dev.taskline.config.TasklineConfig.Http.DEFAULT_MAX_PAGE_BYTES);
    }

    /**
     * @param behind where the lists and a tenant's counts are read: a read replica's pool, whose
     *     answers may lag the journal by its replication delay; or {@code pool}
     * @param maxInlineBytes,maxPageBytes what a stream's snapshot shows of results inline
     */
    public JournalReads(Pool pool, Pool behind, long maxInlineBytes, long maxPageBytes) {
        this.maxInlineBytes = maxInlineBytes;
        this.maxPageBytes = maxPageBytes;
        this.pool = pool;
        this.behind = behind;
        this.sql = Sql.queries();
        this.listTasks = sql.bound("list_tasks", Params.ListTasks.class);
        this.streamEvents = sql.bound("stream_events", Params.StreamEvents.class);
        this.listTenantTasks = sql.bound("list_tenant_tasks", Params.ListTenantTasks.class);
    }

    /** The task with the first {@value TaskView#HISTORY_SHOWN} events of its history, or null. */
    public Future<TaskView> task(UUID id) {
        return query("get_task", "id", id).compose(rows -> {
            if (rows.size() == 0) {
                return Future.succeededFuture(null);
            }
            Row task = rows.iterator().next();
            return query("task_history", "id", id, "after", null, "most", TaskView.HISTORY_SHOWN)
                    .map(events -> {
                        List<Event> history = new ArrayList<>(events.size());
                        events.forEach(row -> history.add(event(row, id)));
                        return taskView(task, history);
                    });
        });
    }

    /** A page of a task's history, after event {@code after} (null: from the first), at most {@code most}. */
    public Future<List<Event>> history(UUID id, Long after, int most) {
        return query("task_history", "id", id, "after", after, "most", most).map(events -> {
            List<Event> history = new ArrayList<>(events.size());
            events.forEach(row -> history.add(event(row, id)));
            return history;
        });
    }

    /** The task's state, or null when there is no such task. */
    public Future<TaskState> state(UUID id) {
        return query("task_state", "id", id)
                .map(rows -> rows.size() == 0
                        ? null
                        : TaskState.parse(rows.iterator().next().getString("state")));
    }

    /**
     * The most tasks one page of a list reads, whatever its filters match: a page of a filter that
     * matches few tasks of a big journal answers with what this many held, and where to go on.
     */
    public static final int LIST_SCAN = 10_000;

    /**
     * The most ranges of ids one page of a list reads (one per unit of the journal, migration 000030,
     * and the gaps between): a filter that matches nothing among units that hold no task of its kind
     * (failed ones, say) still answers within a bound.
     */
    public static final int LIST_RANGES = 32;

    /**
     * A page of tasks, newest first, and where the next goes on when the page read its whole window
     * ({@link #LIST_SCAN}) before it was full (null otherwise: the page says it by being full, or
     * there is nothing more).
     */
    public record Listed(List<TaskView> tasks, UUID scannedTo) {}

    /**
     * The tables a list of tasks in {@code state} reads (taskline_list_window, migration 31): the
     * unfinished tasks' ("live"), the finished ones' ("done"), or the failed tasks' own index
     * ("failed"); null, every table.
     */
    static String tables(TaskState state) {
        if (state == null) {
            return null;
        }
        if (state == TaskState.FAILED) {
            return "failed";
        }
        return state.terminal() ? "done" : "live";
    }

    /** A page of tasks, newest first; {@code after} is the last id of the previous page. Null filters match all. */
    public Future<Listed> list(TaskState state, String queue, String type, UUID after, int limit, String tenant) {
        String named = state == null ? null : state.sql();
        Future<RowSet<Row>> page = tenant == null
                ? behind(
                        listTasks,
                        listTasks.bind(new Params.ListTasks(
                                named,
                                tables(state),
                                queue,
                                type,
                                after,
                                limit,
                                LIST_SCAN,
                                LIST_RANGES,
                                maxInlineBytes,
                                maxPageBytes)))
                : behind(
                        listTenantTasks,
                        listTenantTasks.bind(new Params.ListTenantTasks(
                                named,
                                tables(state),
                                queue,
                                type,
                                after,
                                limit,
                                LIST_SCAN,
                                LIST_RANGES,
                                tenant,
                                maxInlineBytes,
                                maxPageBytes)));
        return page.map(rows -> {
            List<TaskView> tasks = new ArrayList<>(rows.size());
            UUID scannedTo = null;
            for (Row row : rows) {
                scannedTo = row.getUUID("scanned_to");
                if (row.getUUID("id") != null) {
                    tasks.add(taskView(row, null));
                }
            }
            return new Listed(tasks, scannedTo);
        });
    }

    /** One tenant's tasks per queue, from the journal; queues where it has none are left out. */
    public Future<List<TenantCounts>> tenantCounts(String tenant, Instant now) {
        return behind("tenant_counts", "tenant", tenant, "now", Times.utc(now)).map(rows -> {
            List<TenantCounts> counts = new ArrayList<>();
            for (Row row : rows) {
                counts.add(new TenantCounts(
                        row.getString("queue"),
                        row.getLong("waiting"),
                        row.getLong("scheduled"),
                        row.getLong("running"),
                        row.getLong("finished"),
                        row.getLong("accepted"),
                        row.getLong("expired")));
            }
            return counts;
        });
    }

    /** The batch with its tasks, or null. */
    public Future<BatchView> batch(UUID id) {
        return query("get_batch", "id", id).compose(rows -> {
            if (rows.size() == 0) {
                return Future.succeededFuture(null);
            }
            Row batch = rows.iterator().next();
            return query("batch_tasks", "id", id, "max_inline", maxInlineBytes, "max_page", maxPageBytes)
                    .map(tasks -> new BatchView(
                            batch.getUUID("id"),
                            batch.getInteger("size"),
                            batch.getOffsetDateTime("created_at").toInstant(),
                            taskViews(tasks)));
        });
    }

    /** The ids of a batch's tasks; empty when there is no such batch. */
    public Future<List<UUID>> batchTaskIds(UUID batchId) {
        return query("batch_task_ids", "id", batchId).map(rows -> ids(rows, "id"));
    }

    /** Dead letters of a queue (and type, unless null), oldest first, for a bulk retry. */
    public Future<List<UUID>> failedIds(String queue, String type, int limit) {
        return query("failed_ids", "queue", queue, "type", type, "most", limit).map(rows -> ids(rows, "id"));
    }

    /** Where each of the tasks stands, with its newest event id; tasks that do not exist are left out. */
    public Future<List<TaskSnapshot>> streamSnapshot(Collection<UUID> ids) {
        return query(
                        "stream_snapshot",
                        "ids",
                        ids.toArray(new UUID[0]),
                        "max_inline",
                        maxInlineBytes,
                        "max_page",
                        maxPageBytes)
                .map(rows -> {
                    List<TaskSnapshot> list = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        list.add(new TaskSnapshot(
                                row.getUUID("id"),
                                TaskState.parse(row.getString("state")),
                                row.getInteger("attempt"),
                                percent(row),
                                row.getString("progress_message"),
                                row.getValue("result"),
                                row.getValue("error"),
                                row.getLong("last_event_id"),
                                row.getLong("bytes")));
                    }
                    return list;
                });
    }

    /** Up to {@code limit} events of the tasks after {@code afterEventId}, and the transactions then in progress. */
    public Future<EventPage> streamEvents(Collection<UUID> ids, long afterEventId, int limit) {
        return query(
                        streamEvents,
                        streamEvents.bind(new Params.StreamEvents(
                                ids.toArray(new UUID[0]), afterEventId, limit, maxInlineBytes, maxPageBytes)))
                .map(rows -> {
                    List<Event> events = new ArrayList<>(rows.size());
                    Set<String> inProgress = null;
                    for (Row row : rows) {
                        // Every row carries the statement's one list of transactions in progress; with no event,
                        // the only row has nothing else.
                        if (inProgress == null) {
                            inProgress = new HashSet<>(Arrays.asList(row.getArrayOfStrings("in_progress")));
                        }
                        if (row.getValue("event_id") != null) {
                            events.add(event(row, row.getUUID("task_id")));
                        }
                    }
                    return new EventPage(events, inProgress == null ? Set.of() : inProgress);
                });
    }

    /** Which of the tasks have events after {@code afterEventId}. */
    public Future<Set<UUID>> changedSince(Collection<UUID> ids, long afterEventId) {
        return query("changed_since", "ids", ids.toArray(new UUID[0]), "after", afterEventId)
                .map(rows -> new HashSet<>(ids(rows, "task_id")));
    }

    /** The journaled progress of those of the tasks that are running. */
    public Future<List<Progress>> runningProgress(Collection<UUID> ids) {
        return query("running_progress", "ids", ids.toArray(new UUID[0])).map(rows -> {
            List<Progress> list = new ArrayList<>(rows.size());
            rows.forEach(row -> list.add(new Progress(
                    row.getUUID("id"), row.getInteger("progress_percent"), row.getString("progress_message"))));
            return list;
        });
    }

    /** Who holds each of the tasks now; tasks that do not exist are left out. */
    public Future<List<LeaseState>> leaseStates(Collection<UUID> ids) {
        return query("lease_states", "ids", ids.toArray(new UUID[0])).map(rows -> {
            List<LeaseState> list = new ArrayList<>(rows.size());
            rows.forEach(row -> list.add(new LeaseState(
                    row.getUUID("id"),
                    TaskState.parse(row.getString("state")),
                    row.getLong("lease_version"),
                    row.getString("worker_id"))));
            return list;
        });
    }

    /** The newest event id handed out, committed or not. */
    public Future<Long> maxEventId() {
        return JournalFailures.guard(pool.query(sql.get("max_event_id")).execute())
                .map(rows -> rows.iterator().next().getLong("max_event_id"));
    }

    /** Succeeds when the database answers. */
    public Future<Void> ping() {
        return JournalFailures.guard(pool.query(sql.get("ping")).execute()).mapEmpty();
    }

    /** Runs the statement {@code name} with its parameters given by name and value. */
    private Future<RowSet<Row>> query(String name, Object... namesAndValues) {
        Sql.Statement statement = sql.statement(name);
        return JournalFailures.guard(pool.preparedQuery(statement.text()).execute(statement.bind(namesAndValues)));
    }

    private Future<RowSet<Row>> query(Sql.Bound<?> statement, Tuple params) {
        return JournalFailures.guard(pool.preparedQuery(statement.text()).execute(params));
    }

    private Future<RowSet<Row>> behind(String name, Object... namesAndValues) {
        Sql.Statement statement = sql.statement(name);
        return JournalFailures.guardReplica(
                behind.preparedQuery(statement.text()).execute(statement.bind(namesAndValues)));
    }

    private Future<RowSet<Row>> behind(Sql.Bound<?> statement, Tuple params) {
        return JournalFailures.guardReplica(
                behind.preparedQuery(statement.text()).execute(params));
    }

    private static List<UUID> ids(RowSet<Row> rows, String column) {
        List<UUID> ids = new ArrayList<>(rows.size());
        rows.forEach(row -> ids.add(row.getUUID(column)));
        return ids;
    }

    private static List<TaskView> taskViews(RowSet<Row> rows) {
        List<TaskView> tasks = new ArrayList<>(rows.size());
        rows.forEach(row -> tasks.add(taskView(row, null)));
        return tasks;
    }

    private static TaskView taskView(Row row, List<Event> history) {
        String worker = row.getString("worker_id");
        return new TaskView(
                row.getUUID("id"),
                row.getString("queue"),
                row.getString("type"),
                TaskState.parse(row.getString("state")),
                row.getInteger("priority"),
                row.getInteger("attempt"),
                row.getInteger("max_attempts"),
                row.getLong("lease_version"),
                row.getValue("payload"),
                row.getValue("result"),
                row.getValue("error"),
                percent(row),
                row.getString("progress_message"),
                Rows.instant(row, "run_at"),
                Rows.instant(row, "created_at"),
                Rows.instant(row, "updated_at"),
                Rows.instant(row, "started_at"),
                Rows.instant(row, "finished_at"),
                row.getUUID("batch_id"),
                row.getString("tenant"),
                row.getLong("timeout_ms"),
                worker,
                worker == null ? null : Rows.instant(row, "lease_expires_at"),
                history,
                row.getString("concurrency_key"),
                Rows.instant(row, "start_by"),
                row.getString("schedule"),
                Rows.instant(row, "scheduled_for"),
                row.getUUID("flow_id"),
                row.getString("flow_key"),
                leftOut(row));
    }

    /** What a page left out of a task's payload, result and error (too heavy for it), or null. */
    private static TaskView.LeftOut leftOut(Row row) {
        int shown = row.getColumnIndex("shown");
        if (shown < 0 || row.getBoolean(shown)) {
            return null;
        }
        return new TaskView.LeftOut(
                row.getLong("payload_bytes"), row.getLong("result_bytes"), row.getLong("error_bytes"));
    }

    private static Event event(Row row, UUID taskId) {
        Object detail = row.getValue("detail");
        int result = row.getColumnIndex("result");
        int bytes = row.getColumnIndex("result_bytes");
        Object value = result < 0 ? null : row.getValue(result);
        if (value == null && bytes >= 0 && row.getValue(bytes) != null) {
            // A succeeded task's result too heavy for the stream: its reader reads it from the task.
            value = new OmittedResult(row.getLong(bytes));
        }
        return new Event(
                row.getLong("event_id"),
                taskId,
                TaskState.parse(row.getString("from_state")),
                TaskState.parse(row.getString("to_state")),
                Reason.parse(row.getString("reason")),
                row.getString("worker_id"),
                row.getLong("lease_version"),
                row.getInteger("attempt"),
                Rows.instant(row, "at"),
                detail instanceof io.vertx.core.json.JsonObject object ? object : null,
                value);
    }

    private static int percent(Row row) {
        Integer percent = row.getInteger("progress_percent");
        return percent == null ? 0 : percent;
    }
}
