package dev.taskline.queue;

import dev.taskline.model.Insert;
import java.time.Instant;
import java.util.List;

/**
 * Room taken by {@link TaskQueue#reserve}, or the reason there was none. Exactly one of {@link
 * #commit} and {@link #abort} must follow a reservation that was made.
 */
public final class Reservation {

    /** Why a reservation was refused. */
    public enum Refusal {
        QUEUE_FULL,
        SCHEDULED_FULL,
        TENANT_LIMIT
    }

    private final TaskQueue queue;
    private final Refusal refusal;
    private final String tenant;
    private final List<Insert> inserts;
    private final int scheduledCount;
    private final int waitingCount;
    private final int dispatchedCount;
    private final Instant now;
    private final int refused;
    private boolean settled;

    /** Refused: nothing was taken. */
    Reservation(TaskQueue queue, Refusal refusal, String tenant, int refused) {
        this.queue = queue;
        this.refused = refused;
        this.now = null;
        this.refusal = refusal;
        this.tenant = tenant;
        this.inserts = List.of();
        this.scheduledCount = 0;
        this.waitingCount = 0;
        this.dispatchedCount = 0;
        this.settled = true;
    }

    Reservation(
            TaskQueue queue,
            String tenant,
            List<Insert> inserts,
            Instant now,
            int scheduledCount,
            int waitingCount,
            int dispatchedCount) {
        this.queue = queue;
        this.now = now;
        this.refused = 0;
        this.refusal = null;
        this.tenant = tenant;
        this.inserts = List.copyOf(inserts);
        this.scheduledCount = scheduledCount;
        this.waitingCount = waitingCount;
        this.dispatchedCount = dispatchedCount;
    }

    /** Null when room was taken; else why not (nothing was taken). */
    public Refusal refusal() {
        return refusal;
    }

    /** How many of the tasks the refused room was asked for: those due later, those due now, or all (tenant). */
    public int refused() {
        return refused;
    }

    /** The queue the room was asked of. */
    public QueueRoom queue() {
        return queue;
    }

    public String tenant() {
        return tenant;
    }

    /** The tasks as they go into the journal, in the order given: claimed where they were dispatched. */
    public List<Insert> inserts() {
        return inserts;
    }

    /** The tasks are journaled: they wait for their time, for a worker, or run at once. */
    public void commit() {
        queue.commit(this);
    }

    /** The journal refused the tasks or inserted none: give the room back. */
    public void abort() {
        queue.abort(this);
    }

    Instant now() {
        return now;
    }

    int scheduledCount() {
        return scheduledCount;
    }

    int waitingCount() {
        return waitingCount;
    }

    int dispatchedCount() {
        return dispatchedCount;
    }

    /** Called under the queue's lock by {@link #commit} and {@link #abort}: once, and never for a refusal. */
    void settle() {
        if (settled) {
            throw new IllegalStateException(
                    refusal != null
                            ? "a refused reservation holds nothing"
                            : "a reservation is committed or aborted once");
        }
        settled = true;
    }
}
