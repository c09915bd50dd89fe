package dev.taskline.journal;

import dev.taskline.model.Insert;
import dev.taskline.model.ScheduleRecord;
import dev.taskline.model.StoredSchedule;
import dev.taskline.model.TickRecord;
import dev.taskline.model.TickWrite;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;

/**
 * Schedules and their decided ticks (migration 000015), shared by every node on the journal. It
 * writes through its {@link Journal}'s pool, at its clock's time, and tells its change listener of
 * the tasks a tick makes.
 */
public final class JournalSchedules {

    private final Journal journal;
    private final Pool pool;
    private final Sql sql;
    private final Clock clock;
    private final Sql.Bound<Params.ScheduleCreate> create;
    private final Sql.Bound<Params.TicksDecide> ticksDecide;
    private final Sql.Bound<Params.InsertTasks> insertTasks;

    public JournalSchedules(Journal journal) {
        this.journal = journal;
        this.pool = journal.pool();
        this.sql = Sql.queries();
        this.clock = journal.clock();
        this.create = sql.bound("schedule_create", Params.ScheduleCreate.class);
        this.ticksDecide = sql.bound("ticks_decide", Params.TicksDecide.class);
        this.insertTasks = sql.bound("insert_tasks", Params.InsertTasks.class);
    }

    /** Makes a schedule; false when the name is taken. */
    public Future<Boolean> create(UUID id, String name, JsonObject spec, String by) {
        return guard(pool.preparedQuery(create.text())
                        .execute(create.bind(new Params.ScheduleCreate(id, name, spec, "api", now(), by))))
                .map(rows -> rows.size() == 1);
    }

    /**
     * Makes or replaces a schedule a config declares; false when the name belongs to one made through
     * the API, which is left alone.
     */
    public Future<Boolean> declare(String name, JsonObject spec) {
        return guard(run("schedule_declare", "id", UUID.randomUUID(), "name", name, "spec", spec, "now", now()))
                .compose(rows -> rows.size() == 1
                        ? Future.succeededFuture(true)
                        // Nothing written: the same definition is there already, or the name is the API's.
                        : guard(run("schedule_origin", "name", name))
                                .map(found -> found.size() == 1
                                        && "config"
                                                .equals(found.iterator().next().getString("origin"))));
    }

    /** Deletes a schedule and its ticks; false when there was none of that name. */
    public Future<Boolean> delete(String name) {
        return guard(run("schedule_delete", "name", name)).map(rows -> rows.size() == 1);
    }

    /** Pauses or resumes; false when there is no schedule of that name. */
    public Future<Boolean> setPaused(String name, boolean paused, String by) {
        return guard(run("schedule_pause", "name", name, "paused", paused, "now", now(), "changed_by", by))
                .map(rows -> rows.size() > 0);
    }

    /** What each node's scheduler reads: every schedule and its newest decided tick. */
    public Future<List<StoredSchedule>> cursors() {
        return guard(run("schedule_cursors")).map(rows -> {
            List<StoredSchedule> list = new ArrayList<>(rows.size());
            rows.forEach(row -> list.add(stored(row)));
            return list;
        });
    }

    /** Every schedule ({@code name} null) or one, with its last result, for the API. */
    public Future<List<ScheduleRecord>> list(String name) {
        return guard(run("schedule_list", "name", name)).map(rows -> {
            List<ScheduleRecord> list = new ArrayList<>(rows.size());
            for (Row row : rows) {
                Long skipped = row.getLong("skipped");
                list.add(new ScheduleRecord(
                        stored(row),
                        row.getString("origin"),
                        row.getString("changed_by"),
                        row.getString("last_outcome"),
                        row.getUUID("last_task_id"),
                        row.getString("last_reason"),
                        row.getString("last_detail"),
                        row.getString("last_task_state"),
                        skipped == null ? 0 : skipped,
                        Rows.instant(row, "error_tick_at"),
                        Rows.instant(row, "error_at"),
                        row.getString("error_detail")));
            }
            return list;
        });
    }

    /** Which of {@code ticks} some node has decided. */
    public Future<Set<TickWrite.Tick>> decided(List<TickWrite.Tick> ticks) {
        UUID[] schedules = new UUID[ticks.size()];
        OffsetDateTime[] times = new OffsetDateTime[ticks.size()];
        for (int i = 0; i < ticks.size(); i++) {
            schedules[i] = ticks.get(i).scheduleId();
            times[i] = ticks.get(i).tickAt().atOffset(ZoneOffset.UTC);
        }
        return guard(run("ticks_decided", "schedule_ids", schedules, "tick_at", times))
                .map(rows -> {
                    Set<TickWrite.Tick> decided = new HashSet<>();
                    rows.forEach(row ->
                            decided.add(new TickWrite.Tick(row.getUUID("schedule_id"), Rows.instant(row, "tick_at"))));
                    return decided;
                });
    }

    /** The newest {@code limit} ticks of a schedule, newest first. */
    public Future<List<TickRecord>> recentTicks(UUID schedule, int limit) {
        return guard(run("schedule_recent_ticks", "schedule_id", schedule, "most", limit))
                .map(rows -> {
                    List<TickRecord> list = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        list.add(new TickRecord(
                                Rows.instant(row, "tick_at"),
                                row.getString("outcome"),
                                row.getUUID("task_id"),
                                row.getString("reason"),
                                row.getString("detail"),
                                row.getLong("ticks"),
                                Rows.instant(row, "decided_at"),
                                row.getString("decided_by"),
                                row.getString("task_state")));
                    }
                    return list;
                });
    }

    /**
     * Decides schedules' ticks, across nodes: in one transaction, the ticks no node decided yet are
     * journaled (ticks_decide, under the schedules' share locks) and the tasks of those that fire are
     * inserted. A tick another node decided first changes nothing and comes back {@code LOST}; one of
     * a schedule paused or deleted meanwhile, {@code GONE}. Answers in the order of {@code writes}.
     */
    public Future<List<TickWrite.Decision>> decide(List<TickWrite> writes, String nodeId) {
        int n = writes.size();
        UUID[] schedules = new UUID[n];
        OffsetDateTime[] ticks = new OffsetDateTime[n];
        UUID[] tasks = new UUID[n];
        String[] reasons = new String[n];
        String[] details = new String[n];
        Long[] counts = new Long[n];
        Boolean[] skipIfRunning = new Boolean[n];
        for (int i = 0; i < n; i++) {
            TickWrite w = writes.get(i);
            schedules[i] = w.scheduleId();
            ticks[i] = Times.utc(w.tickAt());
            tasks[i] = w.task() == null ? null : w.task().task().id();
            reasons[i] = w.reason();
            details[i] = w.detail();
            counts[i] = w.ticks();
            skipIfRunning[i] = w.skipIfRunning();
        }
        OffsetDateTime now = now();
        List<Insert> fired = new ArrayList<>();
        Params.TicksDecide params =
                new Params.TicksDecide(schedules, ticks, tasks, reasons, details, counts, skipIfRunning, now, nodeId);
        return guard(pool.withTransaction(conn -> conn.preparedQuery(ticksDecide.text())
                        .execute(ticksDecide.bind(params))
                        .compose(rows -> {
                            List<TickWrite.Decision> answers = decisions(writes, rows, fired);
                            if (fired.isEmpty()) {
                                return Future.succeededFuture(answers);
                            }
                            return conn.preparedQuery(insertTasks.text())
                                    .execute(insertTasks.bind(InsertRows.params(List.of(fired), now)))
                                    .map(answers);
                        })))
                .onSuccess(answers ->
                        journal.changed(fired.stream().map(i -> i.task().id()).toList()));
    }

    /**
     * What ticks_decide answered for each write: its tick decided here (fired or skipped), or not
     * (another node's, or its schedule gone or paused). The fired ticks' tasks go into {@code fired}.
     */
    private static List<TickWrite.Decision> decisions(List<TickWrite> writes, RowSet<Row> rows, List<Insert> fired) {
        Map<UUID, Row> live = new HashMap<>();
        Map<TickWrite.Tick, Row> decided = new HashMap<>();
        for (Row row : rows) {
            if ("live".equals(row.getString("outcome"))) {
                live.put(row.getUUID("schedule_id"), row);
            } else {
                decided.put(
                        new TickWrite.Tick(
                                row.getUUID("schedule_id"),
                                row.getOffsetDateTime("tick_at").toInstant()),
                        row);
            }
        }
        List<TickWrite.Decision> answers = new ArrayList<>(writes.size());
        for (TickWrite w : writes) {
            Row row = decided.get(w.tick());
            if (row != null && "fired".equals(row.getString("outcome"))) {
                fired.add(w.task());
                answers.add(new TickWrite.Decision(w, TickWrite.Outcome.FIRED, null));
            } else if (row != null) {
                answers.add(new TickWrite.Decision(w, TickWrite.Outcome.SKIPPED, row.getString("reason")));
            } else {
                answers.add(new TickWrite.Decision(
                        w, live.containsKey(w.scheduleId()) ? TickWrite.Outcome.LOST : TickWrite.Outcome.GONE, null));
            }
        }
        return answers;
    }

    private static StoredSchedule stored(Row row) {
        return new StoredSchedule(
                row.getUUID("id"),
                row.getString("name"),
                row.getString("spec"),
                row.getBoolean("paused"),
                Rows.instant(row, "created_at"),
                Rows.instant(row, "changed_at"),
                Rows.instant(row, "last_tick_at"),
                row.getColumnIndex("last_decided_by") < 0 ? null : row.getString("last_decided_by"));
    }

    /** Runs the statement {@code name} with its parameters given by name and value. */
    private Future<RowSet<Row>> run(String name, Object... namesAndValues) {
        Sql.Statement statement = sql.statement(name);
        return pool.preparedQuery(statement.text()).execute(statement.bind(namesAndValues));
    }

    private OffsetDateTime now() {
        return Times.utc(clock.instant());
    }

    private static <T> Future<T> guard(Future<T> future) {
        return JournalFailures.guard(future);
    }
}
