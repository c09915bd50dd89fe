package dev.taskline.schedule;

import dev.taskline.admission.Admission;
import dev.taskline.journal.JournalSchedules;
import dev.taskline.model.ScheduleRecord;
import dev.taskline.model.problem.InvalidScheduleException;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.ScheduleExistsException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Every operation on schedules: make, read, pause, resume, delete, and the config's declarations
 * at start-up. A definition is checked whole before anything is written (its cadence fires, its
 * task would be admitted), so that a schedule never fails at each tick for what could be known when
 * it was made. Each change is journaled; this node's scheduler reads it at its next pass, the
 * others within about a second.
 */
public final class Schedules {

    public static final int NEXT_FIRE_TIMES = 5;
    public static final int RECENT_TICKS = 10;

    private final JournalSchedules journal;
    private final Admission admission;
    private final Scheduler scheduler;
    private final Clock clock;

    public Schedules(JournalSchedules journal, Admission admission, Scheduler scheduler, Clock clock) {
        this.journal = journal;
        this.admission = admission;
        this.scheduler = scheduler;
        this.clock = clock;
    }

    /**
     * Checks a definition: {@code name} null takes it from the body (the API), else it is the config's key.
     *
     * @throws InvalidScheduleException naming the field
     */
    public ScheduleSpec check(JsonObject body, String name) {
        ScheduleSpec spec = ScheduleSpec.parse(body, name);
        if (spec.cadence().next(clock.instant()) == null) {
            throw new InvalidScheduleException("cron: '" + spec.cron() + "' never fires (from now on, in "
                    + spec.zone().getId() + ")");
        }
        try {
            admission.check(spec.task(), "task.");
        } catch (InvalidTaskException e) {
            throw new InvalidScheduleException(e.getMessage());
        }
        return spec;
    }

    /** Makes a schedule; its ticks start after now. */
    public Future<ScheduleView> create(JsonObject body, String by) {
        ScheduleSpec spec;
        try {
            spec = check(body, null);
        } catch (InvalidScheduleException e) {
            return Future.failedFuture(e);
        }
        return journal.create(UUID.randomUUID(), spec.name(), spec.stored(), by).compose(made -> {
            if (!made) {
                return Future.failedFuture(new ScheduleExistsException(spec.name()));
            }
            return changed().compose(v -> get(spec.name()));
        });
    }

    /**
     * Makes or replaces the schedules a config declares (name to definition), before the node serves:
     * a bad one, or a name taken by a schedule made through the API, stops the start naming it.
     */
    public Future<Void> declare(Map<String, JsonObject> declared) {
        List<ScheduleSpec> specs = new ArrayList<>();
        for (Map.Entry<String, JsonObject> entry : declared.entrySet()) {
            try {
                specs.add(check(entry.getValue(), entry.getKey()));
            } catch (InvalidScheduleException e) {
                return Future.failedFuture(
                        new dev.taskline.config.ConfigException("schedules." + entry.getKey() + ": " + e.getMessage()));
            }
        }
        Future<Void> chain = Future.succeededFuture();
        for (ScheduleSpec spec : specs) {
            chain = chain.compose(v -> journal.declare(spec.name(), spec.stored())
                    .compose(ours -> ours
                            ? Future.<Void>succeededFuture()
                            : Future.failedFuture(new dev.taskline.config.ConfigException(
                                    "schedules." + spec.name() + ": a schedule of that name"
                                            + " was made through the API; delete it (DELETE /api/schedules/"
                                            + spec.name() + ") or rename this one"))));
        }
        return chain.compose(v -> changed());
    }

    /** Every schedule, by name, without recent ticks. */
    public Future<List<ScheduleView>> list() {
        return journal.list(null).map(rows -> {
            Instant now = clock.instant();
            List<ScheduleView> views = new ArrayList<>(rows.size());
            for (ScheduleRecord row : rows) {
                ScheduleSpec spec = readable(row);
                if (spec != null) {
                    views.add(new ScheduleView(spec, row, spec.nextTicks(now, NEXT_FIRE_TIMES), null));
                }
            }
            return views;
        });
    }

    /** One schedule with its newest ticks; null when there is none of that name. */
    public Future<ScheduleView> get(String name) {
        return journal.list(name).compose(rows -> {
            ScheduleSpec spec = rows.isEmpty() ? null : readable(rows.get(0));
            if (spec == null) {
                return Future.succeededFuture(null);
            }
            ScheduleRecord row = rows.get(0);
            return journal.recentTicks(row.row().id(), RECENT_TICKS)
                    .map(ticks -> new ScheduleView(spec, row, spec.nextTicks(clock.instant(), NEXT_FIRE_TIMES), ticks));
        });
    }

    /** Pauses or resumes; null when there is none of that name. */
    public Future<ScheduleView> pause(String name, boolean paused, String by) {
        return journal.setPaused(name, paused, by)
                .compose(found -> found ? changed().compose(v -> get(name)) : Future.succeededFuture(null));
    }

    /** Deletes a schedule: no tick of it fires after this answers. False when there was none of that name. */
    public Future<Boolean> delete(String name) {
        return journal.delete(name).compose(found -> found ? changed().map(true) : Future.succeededFuture(false));
    }

    /**
     * This node's scheduler reads the change at its next pass (within a quarter of a second), not
     * before the answer: a burst of schedules made at once must not cost a pass each. Nothing waits
     * on it: a new schedule's ticks are owed from when it was made, and no node decides a tick after
     * a pause or a delete has committed (the journal sees to that).
     */
    private Future<Void> changed() {
        scheduler.changed();
        return Future.succeededFuture();
    }

    private static ScheduleSpec readable(ScheduleRecord row) {
        try {
            return ScheduleSpec.fromStored(
                    row.row().name(), new JsonObject(row.row().spec()));
        } catch (RuntimeException e) {
            return null;
        }
    }
}
