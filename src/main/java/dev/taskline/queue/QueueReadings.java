package dev.taskline.queue;

import dev.taskline.config.QueueConfig;

/**
 * What anyone may read of one queue on this node: its counts and what holds its tasks back. Every
 * face of {@link TaskQueue} shows these; a reader (metrics, the node's status) holds this one
 * alone. Each reading is taken under the queue's lock, so one reading is consistent in itself;
 * two readings may straddle a change.
 */
public interface QueueReadings {

    String name();

    QueueConfig config();

    /** Whether an operator has the queue paused: it takes tasks, but hands none to a worker. */
    boolean paused();

    /** One consistent reading of the custody counts. */
    Counts counts();

    /** Tasks due and waiting here, those held aside by their key or a rate budget with them. */
    int waiting();

    /** Tasks waiting aside because their concurrency key is at its bound (here, or on other nodes). */
    int heldByKeys();

    /** Tasks waiting because a rate budget is spent: all in line, when it is the queue's own; else its key's. */
    int heldByRate();

    /** Tasks held until they are due: delayed, or waiting out a retry's backoff. */
    int scheduled();

    /** Room left for new tasks: capacity less waiting, claimed ahead and reserved. */
    int room();

    /** Unfinished and reserved tasks of {@code tenant} in this queue, its blocked flow tasks with them. */
    int tenantHeld(String tenant);

    /** How long the task first in line has waited, in ms at {@code nowMillis}; 0 when none wait. */
    long oldestWaitingAgeMs(long nowMillis);

    /**
     * Custody counts; {@code accepted - finished == waiting + scheduled + running} always. Waiting
     * includes the tasks claimed ahead of a free slot ({@code claimedAhead}: their handlers have not
     * started); running includes those whose handler returned and whose end is being journaled
     * ({@code finishing}: the journal has them running until it commits), so running may exceed the
     * slots by that many while no more than the slots' handlers run.
     */
    record Counts(
            long accepted, long finished, int waiting, int scheduled, int running, int claimedAhead, int finishing) {
        public long unfinished() {
            return (long) waiting + scheduled + running;
        }
    }
}
