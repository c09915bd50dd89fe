package dev.taskline.queue;

import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import java.time.Instant;
import java.util.List;

/**
 * One queue as admission sees it: room that submissions reserve, and what a task admitted now
 * would find ahead of it. A reservation that was made is settled once, by {@link
 * Reservation#commit} or {@link Reservation#abort} (it throws on a second); a refused one holds
 * nothing.
 */
public interface QueueRoom extends QueueReadings {

    /**
     * Takes room for tasks of {@code tenant} (null: none) about to be journaled, all or none. The
     * caller journals {@link Reservation#inserts()}, then commits or aborts.
     */
    Reservation reserve(List<Insert> tasks, String tenant, Instant now);

    /**
     * What a task about to be admitted due now would find, for an estimate of when it starts: whether
     * the queue is paused, the slots free now, and, for each entry of {@code peers} (tasks of its own
     * submission ahead of it), how many tasks start before it: those in line that would be handed
     * out first, and those claimed ahead of a free slot. Tasks reserved by submissions not journaled
     * yet, or held aside for their key, are not counted: the count errs low, never high. One pass
     * over the line (the probe's tenant's, when tenants take turns), under the lock.
     */
    Outlook outlook(Task probe, int[] peers);

    /** See {@link #outlook}; {@code startsBefore} has one entry per peer count asked. */
    record Outlook(boolean paused, int freeSlots, int[] startsBefore) {}
}
