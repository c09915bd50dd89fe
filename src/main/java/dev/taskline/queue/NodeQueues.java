package dev.taskline.queue;

import java.util.Collection;

/**
 * This node's queues by name, each seen through {@code Q}: the face of {@link TaskQueue} its
 * holder uses. A part is handed the {@link QueueRegistry} as a {@code NodeQueues<? extends
 * QueueRoom>}, say, and reaches no more of a queue than that face.
 */
public interface NodeQueues<Q extends QueueReadings> {

    /** The queue, or null when this node has none by that name. */
    Q get(String name);

    /** Every queue, in the order of their names. */
    Collection<? extends Q> all();
}
