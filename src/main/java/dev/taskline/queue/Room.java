package dev.taskline.queue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.queue.QueueSlots.Dispatched;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collections;
import java.util.Comparator;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Set;

/**
 * One queue's room: what waits (in line, aside, claimed ahead of a slot) against its capacity,
 * what is scheduled against its scheduled capacity, and the room that submissions not journaled
 * yet have reserved in both. Admission reserves room before it journals a submission and commits
 * the reservation after the journal's commit (or aborts it), so concurrent submissions cannot
 * overshoot the bounds. Not thread-safe: {@link TaskQueue} holds its lock around the calls that say
 * so.
 */
final class Room {

    private final QueueConfig config;
    private final WaitingLine waiting;
    private final Scheduled scheduled;
    private final Custody custody;
    private final Gates gates;
    private final Slots slots;
    private final Comparator<Insert> bestFirst;
    /** Waiting room reserved by submissions not journaled yet. */
    private int reserved;
    /** Scheduled room reserved by submissions not journaled yet. */
    private int reservedScheduled;

    Room(
            QueueConfig config,
            Comparator<Task> order,
            WaitingLine waiting,
            Scheduled scheduled,
            Custody custody,
            Gates gates,
            Slots slots) {
        this.config = config;
        this.waiting = waiting;
        this.scheduled = scheduled;
        this.custody = custody;
        this.gates = gates;
        this.slots = slots;
        this.bestFirst = Comparator.comparing(Insert::task, order);
    }

    /**
     * A submission's tasks as room is asked for them: those due after {@code now} (scheduled), those
     * due now, and of those the ones that may be journaled claimed by an idle worker. A gated task (a
     * bounded key, a rate limit) never is: its room across nodes is decided by the claim
     * (claim_gated), so it waits in line for one. Nor is a task with a deadline: the insert is
     * stamped when its group goes out, which may be after the deadline that admission checked, and
     * only a claim checks it against its own time. Made outside the lock.
     */
    record Ask(List<Insert> tasks, List<Insert> later, List<Insert> due, List<Insert> dispatchable) {

        static Ask of(List<Insert> tasks, Instant now, Gates gates) {
            List<Insert> later = new ArrayList<>();
            List<Insert> due = new ArrayList<>();
            for (Insert task : tasks) {
                (task.runAt().isAfter(now) ? later : due).add(task);
            }
            List<Insert> dispatchable = due;
            if (gates.any() || anyDeadline(due)) {
                dispatchable = new ArrayList<>(due.size());
                for (Insert task : due) {
                    if (!gates.gated(task.task()) && task.startBy() == null) {
                        dispatchable.add(task);
                    }
                }
            }
            return new Ask(tasks, later, due, dispatchable);
        }

        private static boolean anyDeadline(List<Insert> tasks) {
            for (Insert task : tasks) {
                if (task.startBy() != null) {
                    return true;
                }
            }
            return false;
        }
    }

    /** What {@link #take} decided: the room refused (with how many it was asked for), or taken. */
    record Taken(Reservation.Refusal refusal, int refused, int dispatch, String worker, Duration lease) {}

    /**
     * Under the lock: takes room for {@code ask}'s tasks of {@code tenant} (null: none), all or none;
     * {@code startsHeld}: nothing may be handed out now (a pause, the queue's rate budget spent).
     * Tasks due later take scheduled room; those due now go to the worker when nothing waits (they
     * must not overtake anyone; they are journaled claimed and start without a claim of their own),
     * as many as its free slots and claims ahead take, and the rest take waiting room. Waiting (with
     * claimed ahead) plus reserved never exceeds capacity, scheduled plus reserved never the
     * scheduled capacity, one tenant's unfinished and reserved tasks never its limit.
     */
    Taken take(Ask ask, String tenant, boolean startsHeld) {
        if (!custody.tenantFits(tenant, ask.tasks.size())) {
            return new Taken(Reservation.Refusal.TENANT_LIMIT, ask.tasks.size(), 0, null, null);
        }
        if (!ask.later.isEmpty()
                && scheduled.size() + reservedScheduled + ask.later.size() > config.scheduledCapacity()) {
            return new Taken(Reservation.Refusal.SCHEDULED_FULL, ask.later.size(), 0, null, null);
        }
        int due = ask.due.size();
        int dispatch = 0;
        if (due > 0 && slots.workerId() != null && waiting.isEmpty() && !startsHeld) {
            int room = Math.max(0, slots.claimRoom());
            // A local worker takes what fits (the best first) and the rest wait behind it; a remote
            // waiter takes the whole submission or none of it.
            dispatch = config.remote()
                    ? (ask.dispatchable.size() == due && due <= room ? due : 0)
                    : Math.min(ask.dispatchable.size(), room);
        }
        // Tasks dispatched beyond the free slots are claimed ahead: they take waiting room as those
        // that wait do.
        if (due > 0
                && waiting.size() + gates.aside() + reserved + (due - dispatch) + slots.beyondSlotsWith(dispatch)
                        > config.capacity()) {
            return new Taken(Reservation.Refusal.QUEUE_FULL, due, 0, null, null);
        }
        reservedScheduled += ask.later.size();
        slots.dispatching(dispatch);
        reserved += due - dispatch;
        for (Insert task : ask.tasks) {
            custody.hold(task.task().id(), tenant);
        }
        return new Taken(null, 0, dispatch, slots.workerId(), slots.leaseFor());
    }

    /**
     * The tasks as they go into the journal, in the order given: the best {@code taken.dispatch()}
     * of the dispatchable ones claimed by the worker. Made outside the lock, which the worker takes
     * for every task it starts and ends.
     */
    List<Insert> inserts(Ask ask, Taken taken, Instant now) {
        int dispatch = taken.dispatch();
        Set<Insert> toWorker = Collections.newSetFromMap(new IdentityHashMap<>());
        if (dispatch == ask.dispatchable.size()) {
            toWorker.addAll(ask.dispatchable);
        } else if (dispatch > 0) {
            List<Insert> best = new ArrayList<>(ask.dispatchable);
            best.sort(bestFirst);
            toWorker.addAll(best.subList(0, dispatch));
        }
        List<Insert> inserts = new ArrayList<>(ask.tasks.size());
        Instant leaseUntil = dispatch > 0 ? now.plus(taken.lease()) : null;
        for (Insert task : ask.tasks) {
            inserts.add(toWorker.contains(task) ? task.claimedBy(taken.worker(), leaseUntil) : task);
        }
        return inserts;
    }

    /** Under the lock: the reserved tasks are journaled; they wait for their time, for a worker, or run at once. */
    void commit(Reservation reservation, List<Dispatched> leased) {
        custody.accepted(reservation.inserts().size());
        reservedScheduled -= reservation.scheduledCount();
        reserved -= reservation.waitingCount();
        slots.dispatched(leased);
        if (reservation.waitingCount() + reservation.scheduledCount() > 0) {
            for (Insert insert : reservation.inserts()) {
                if (insert.claimed()) {
                    continue;
                }
                if (insert.runAt().isAfter(reservation.now())) {
                    scheduled.add(insert.task());
                } else {
                    gates.line(insert.task());
                }
            }
        }
    }

    /** Under the lock: the journal refused the tasks or inserted none; their room is given back. */
    void abort(Reservation reservation) {
        reservedScheduled -= reservation.scheduledCount();
        reserved -= reservation.waitingCount();
        slots.undispatched(reservation.dispatchedCount());
        for (Insert insert : reservation.inserts()) {
            custody.release(insert.task().id());
        }
    }

    /**
     * The waiting room in use: tasks in line, aside, those reserved for it, and those a local worker
     * holds claimed beyond its slots (they wait for a slot too, only leased already). So claiming
     * ahead never lets more tasks in than slots plus capacity.
     */
    int occupied() {
        return waiting.size() + gates.aside() + reserved + slots.aheadOfSlots();
    }

    /** Whether one more task fits in the waiting room. */
    boolean hasWaitingRoom() {
        return occupied() < config.capacity();
    }

    /** Whether one more task fits in the scheduled room. */
    boolean hasScheduledRoom() {
        return scheduled.size() + reservedScheduled < config.scheduledCapacity();
    }

    /** Waiting room reserved by submissions not journaled yet. */
    int reserved() {
        return reserved;
    }
}
