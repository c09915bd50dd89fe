package dev.taskline.model;

import java.time.Instant;
import java.util.UUID;

/**
 * A flow as the journal keeps it: its counters say its state without reading its tasks. {@code
 * state} is running, succeeded (every task did), failed (a task failed or expired and nothing is
 * left to run) or cancelled.
 */
public record FlowRecord(
        UUID id,
        String name,
        String tenant,
        int size,
        int unfinished,
        int failed,
        int cancelled,
        String state,
        Instant createdAt,
        Instant finishedAt) {

    public boolean finished() {
        return !"running".equals(state);
    }
}
