package dev.taskline.service;

import static dev.taskline.service.Permits.permitted;

import dev.taskline.model.problem.ForbiddenException;
import dev.taskline.model.problem.NotFoundException;
import dev.taskline.schedule.ScheduleView;
import dev.taskline.schedule.Schedules;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;

/** Schedules, for the callers that may see them: make, list, read, pause and resume, delete. */
public final class ScheduleService {

    private final Schedules schedules;

    public ScheduleService(Schedules schedules) {
        this.schedules = schedules;
    }

    /**
     * Makes a schedule: an admin's call, as a schedule submits tasks on its own for as long as it
     * lives (they have no tenant). 409 for a name taken.
     */
    public Future<ScheduleView> create(Caller caller, JsonObject body) {
        // Null: made, then deleted by another caller before it could be read back.
        return permitted(() -> caller.require(Scope.ADMIN))
                .compose(v -> schedules.create(body, caller.keyId()))
                .map(view -> found(view, String.valueOf(body.getValue("name"))));
    }

    /** Every schedule, with its next fire times and last result; for callers that see every tenant. */
    public Future<List<ScheduleView>> list(Caller caller) {
        return permitted(() -> readSchedules(caller))
                .compose(v -> schedules.list())
                .map(list -> list.stream().map(view -> seenBy(caller, view)).toList());
    }

    /** One schedule with its ten newest ticks. */
    public Future<ScheduleView> get(Caller caller, String name) {
        return permitted(() -> readSchedules(caller))
                .compose(v -> schedules.get(name))
                .map(view -> seenBy(caller, found(view, name)));
    }

    /** Pauses ({@code paused}) or resumes a schedule on every node: no tick fires while it is paused, nor is owed after. */
    public Future<ScheduleView> pause(Caller caller, String name, boolean paused) {
        return permitted(() -> caller.require(Scope.ADMIN))
                .compose(v -> schedules.pause(name, paused, caller.keyId()))
                .map(view -> found(view, name));
    }

    /** Deletes a schedule: no tick of it fires once this answers; the tasks it made stay. */
    public Future<Void> delete(Caller caller, String name) {
        return permitted(() -> caller.require(Scope.ADMIN))
                .compose(v -> schedules.delete(name))
                .map(found -> {
                    if (!found) {
                        throw NotFoundException.schedule(name);
                    }
                    return null;
                });
    }

    /** A schedule as {@code caller} may see it: who paused or resumed it is an admin's to know. */
    private static ScheduleView seenBy(Caller caller, ScheduleView view) {
        return caller.isAdmin() || view.row() == null
                ? view
                : new ScheduleView(view.spec(), view.row().withoutActor(), view.nextFireTimes(), view.recentTicks());
    }

    private static ScheduleView found(ScheduleView view, String name) {
        if (view == null) {
            throw NotFoundException.schedule(name);
        }
        return view;
    }

    private static void readSchedules(Caller caller) {
        caller.require(Scope.READ);
        if (!caller.seesEveryTenant()) {
            throw new ForbiddenException(
                    "schedules and the tasks they make belong to no tenant: a key bound to a tenant"
                            + " does not see them");
        }
    }
}
