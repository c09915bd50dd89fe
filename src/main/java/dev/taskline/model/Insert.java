package dev.taskline.model;

import java.time.Instant;

/**
 * A new task as it goes into the journal: waiting in line, or claimed at once by a worker that had
 * a free slot while nothing waited (inserted running under lease version 1, attempt 1, which
 * spares the claim statement and its round trip). {@code runAt} is the due time to the full
 * precision the admission computed it at, as the journal stores it and the answer shows it; the
 * task held in memory keeps milliseconds, the precision it is ordered and woken at. {@code startBy}
 * is the deadline of its first start, null for none; the journal enforces it, so the task held in
 * memory does not carry it.
 */
public record Insert(Task task, Instant runAt, String workerId, Instant leaseUntil, Instant startBy) {

    public static Insert waiting(Task task, Instant runAt) {
        return waiting(task, runAt, null);
    }

    /** A waiting task that must start by {@code startBy} (null: whenever), or end expired. */
    public static Insert waiting(Task task, Instant runAt, Instant startBy) {
        return new Insert(task, runAt, null, null, startBy);
    }

    /** A task due at its own {@link Task#runAt()}. */
    public static Insert waiting(Task task) {
        return waiting(task, task.runAt());
    }

    /** The same task, to be inserted claimed by {@code workerId}, its lease running until {@code leaseUntil}. */
    public Insert claimedBy(String workerId, Instant leaseUntil) {
        return new Insert(task, runAt, workerId, leaseUntil, startBy);
    }

    public boolean claimed() {
        return workerId != null;
    }

    /** The lease a claimed insert starts with; null for a waiting one. */
    public Lease lease() {
        return workerId == null ? null : new Lease(task.id(), workerId, 1, 1);
    }

    /** The task as it is held once the insert has committed: a claimed one is in its first attempt. */
    public Task journaledTask() {
        return workerId == null ? task : task.pendingAgain(1, 1, task.dueAtMillis());
    }
}
