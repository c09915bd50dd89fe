package dev.taskline.model;

import java.util.UUID;

/**
 * Where a followed task stands now, and the id of its newest event (null when it has none yet);
 * its result and error weigh {@code bytes}, and are null when the snapshot left them out.
 */
public record TaskSnapshot(
        UUID id,
        TaskState state,
        int attempt,
        int progressPercent,
        String progressMessage,
        Object result,
        Object error,
        Long lastEventId,
        long bytes) {

    /** Whether its result and error were left out of the snapshot (too heavy): the task's own read shows them. */
    public boolean leftOut() {
        return result == null && error == null && bytes > 0;
    }
}
