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
        String errorDetail) {

    /** The same schedule without the key that last paused or resumed it, for a reader who may not know it. */
    public ScheduleRecord withoutActor() {
        return changedBy == null
                ? this
                : new ScheduleRecord(
                        row,
                        origin,
                        null,
                        lastOutcome,
                        lastTaskId,
                        lastReason,
                        lastDetail,
                        lastTaskState,
                        skipped,
                        errorTickAt,
                        errorAt,
                        errorDetail);
    }
}
