package dev.taskline.model;

import java.time.Instant;
import java.util.UUID;

/**
 * A schedule's tick as a node would decide it: fired with {@code task} (not journaled yet), or
 * skipped for {@code reason} (then {@code task} is null). {@code ticks} is how many ticks the row
 * stands for (a run of missed ones has one row, at its newest); {@code skipIfRunning} says the
 * journal is to skip the tick instead while the schedule's last task is unfinished.
 */
public record TickWrite(
        UUID scheduleId, Instant tickAt, Insert task, String reason, String detail, long ticks, boolean skipIfRunning) {

    /** The tick this write is for. */
    public Tick tick() {
        return new Tick(scheduleId, tickAt);
    }

    /** A schedule's tick, as the journal keys it. */
    public record Tick(UUID scheduleId, Instant tickAt) {}

    public static TickWrite fire(UUID scheduleId, Instant tickAt, Insert task, boolean skipIfRunning) {
        return new TickWrite(scheduleId, tickAt, task, null, null, 1, skipIfRunning);
    }

    public static TickWrite skip(UUID scheduleId, Instant tickAt, String reason, String detail, long ticks) {
        return new TickWrite(scheduleId, tickAt, null, reason, detail, ticks, false);
    }

    /**
     * What became of a tick: {@code FIRED} or {@code SKIPPED} by this write (with the skip's {@code
     * reason}: the one asked for, or "overlap" when the journal found the last task unfinished);
     * {@code LOST} when another node had decided it; {@code GONE} when the schedule is paused or
     * deleted in the journal.
     */
    public record Decision(TickWrite write, Outcome outcome, String reason) {}

    public enum Outcome {
        FIRED,
        SKIPPED,
        LOST,
        GONE
    }
}
