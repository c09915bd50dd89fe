package dev.taskline.model;

import java.time.Instant;

/**
 * A queue's controls as the journal holds them.
 *
 * @param changedAt when the pause was last switched; null for a queue nothing was ever set on
 * @param changedBy the key that switched it; null with auth off, or when nothing was set
 */
public record QueueControl(String queue, boolean paused, Instant changedAt, String changedBy) {

    public static QueueControl none(String queue) {
        return new QueueControl(queue, false, null, null);
    }

    /** The same switch without the key that set it, for a reader who may not know it. */
    public QueueControl withoutActor() {
        return changedBy == null ? this : new QueueControl(queue, paused, changedAt, null);
    }
}
