package dev.taskline.journal;

import dev.taskline.model.ScheduleRecord;
import dev.taskline.model.StoredSchedule;
import dev.taskline.model.TickRecord;
import dev.taskline.model.TickWrite;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/** Schedules and their decided ticks (migration 000015), shared by every node on the journal. */
public final class JournalSchedules {

    private final Pool pool;
    private final Sql sql;
    private final Clock clock;

    public JournalSchedules(Pool pool, Clock clock) {
        this.pool = pool;
        this.sql = Sql.queries();
        this.clock = clock;
    }

    /** Makes a schedule; false when the name is taken. */
    public Future<Boolean> create(UUID id, String name, JsonObject spec, String by) {
        return guard(pool.preparedQuery(sql.get("schedule_create")).execute(Tuple.of(id, name, spec, "api", now(), by)))
                .map(rows -> rows.size() == 1);
    }

    /**
     * Makes or replaces a schedule a config declares; false when the name belongs to one made through
     * the API, which is left alone.
     */
    public Future<Boolean> declare(String name, JsonObject spec) {
        return guard(pool.preparedQuery(sql.get("schedule_declare"))
                        .execute(Tuple.of(UUID.randomUUID(), name, spec, now())))
                .compose(rows -> rows.size() == 1
                        ? Future.succeededFuture(true)
                        // Nothing written: the same definition is there already, or the name is the API's.
                        : guard(pool.preparedQuery(sql.get("schedule_origin")).execute(Tuple.of(name)))
                                .map(found -> found.size() == 1
                                        && "config"
                                                .equals(found.iterator().next().getString("origin"))));
    }

    /** Deletes a schedule and its ticks; false when there was none of that name. */
    public Future<Boolean> delete(String name) {
        return guard(pool.preparedQuery(sql.get("schedule_delete")).execute(Tuple.of(name)))
                .map(rows -> rows.size() == 1);
    }

    /** Pauses or resumes; false when there is no schedule of that name. */
    public Future<Boolean> setPaused(String name, boolean paused, String by) {
        return guard(pool.preparedQuery(sql.get("schedule_pause")).execute(Tuple.of(name, paused, now(), by)))
                .map(rows -> rows.size() > 0);
    }

    /** What each node's scheduler reads: every schedule and its newest decided tick. */
    public Future<List<StoredSchedule>> cursors() {
        return guard(pool.preparedQuery(sql.get("schedule_cursors")).execute()).map(rows -> {
            List<StoredSchedule> list = new ArrayList<>(rows.size());
            rows.forEach(row -> list.add(row0(row)));
            return list;
        });
    }

    /** Every schedule ({@code name} null) or one, with its last result, for the API. */
    public Future<List<ScheduleRecord>> list(String name) {
        return guard(pool.preparedQuery(sql.get("schedule_list")).execute(Tuple.of(name)))
                .map(rows -> {
                    List<ScheduleRecord> list = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        Long skipped = row.getLong("skipped");
                        list.add(new ScheduleRecord(
                                row0(row),
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
        return guard(pool.preparedQuery(sql.get("ticks_decided")).execute(Tuple.wrap(new Object[] {schedules, times})))
                .map(rows -> {
                    Set<TickWrite.Tick> decided = new HashSet<>();
                    rows.forEach(row ->
                            decided.add(new TickWrite.Tick(row.getUUID("schedule_id"), Rows.instant(row, "tick_at"))));
                    return decided;
                });
    }

    /** The newest {@code limit} ticks of a schedule, newest first. */
    public Future<List<TickRecord>> recentTicks(UUID schedule, int limit) {
        return guard(pool.preparedQuery(sql.get("schedule_recent_ticks")).execute(Tuple.of(schedule, limit)))
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

    private static StoredSchedule row0(Row row) {
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

    private OffsetDateTime now() {
        return clock.instant().atOffset(ZoneOffset.UTC);
    }

    private static <T> Future<T> guard(Future<T> future) {
        return JournalFailures.guard(future);
    }
}
