package dev.taskline.model;

import java.util.UUID;

/** Where a followed task stands now, and the id of its newest event (null when it has none yet). */
public record TaskSnapshot(
        UUID id,
        TaskState state,
        int attempt,
        int progressPercent,
        String progressMessage,
        Object result,
        Object error,
        Long lastEventId) {}
