package dev.taskline.admission;

import java.time.Instant;
import java.util.UUID;

/**
 * Where a task stands besides its queue, as the door that admits it says: alone, in a batch, as a
 * schedule's tick, or in a flow. Whatever a door does not set stays empty (null, false), as the
 * journal keeps it for a task of no batch, schedule or flow. A single task, the hot path, takes
 * {@link #ALONE} and so allocates nothing for it; a batch one placement for all its tasks.
 *
 * @param batchId the batch (null: none)
 * @param schedule the schedule whose tick made it (null: none)
 * @param tick that tick (null with no schedule)
 * @param flowId the flow (null: none)
 * @param flowKey its key in the flow (null with no flow)
 * @param hasParents whether it waits for parents in the flow
 */
public record Placement(UUID batchId, String schedule, Instant tick, UUID flowId, String flowKey, boolean hasParents) {

    /** A task of its own: no batch, schedule or flow. */
    public static final Placement ALONE = new Placement(null, null, null, null, null, false);

    /** A task of batch {@code batchId}. */
    public static Placement batch(UUID batchId) {
        return new Placement(batchId, null, null, null, null, false);
    }

    /** The task schedule {@code schedule} submits for its tick at {@code tick}. */
    public static Placement tick(String schedule, Instant tick) {
        return new Placement(null, schedule, tick, null, null, false);
    }

    /** Task {@code key} of flow {@code flowId}; {@code hasParents}: it waits for them, blocked. */
    public static Placement flow(UUID flowId, String key, boolean hasParents) {
        return new Placement(null, null, null, flowId, key, hasParents);
    }
}
