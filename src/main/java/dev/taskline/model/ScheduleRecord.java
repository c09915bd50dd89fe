package dev.taskline.model;

import java.time.Instant;
import java.util.UUID;

/**
 * A schedule as a reader sees it: its row, the newest tick's outcome (with its task's state; null
 * once retention took it), its skipped ticks in the journal and its last error.
 */
public record ScheduleRecord(
        StoredSchedule row,
        String origin,
        String changedBy,
        String lastOutcome,
        UUID lastTaskId,
        String lastReason,
        String lastDetail,
        String lastTaskState,
        long skipped,
        Instant errorTickAt,
        Instant errorAt,
        String errorDetail) {}
