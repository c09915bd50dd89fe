package dev.taskline.schedule;

import dev.taskline.model.ScheduleRecord;
import dev.taskline.model.TickRecord;
import java.time.Instant;
import java.util.List;

/**
 * A schedule as a reader sees it: its definition, its row in the journal (pause, last tick, skips,
 * last error), its next fire times from now, and (for one schedule read by name) its newest ticks,
 * null in lists.
 */
public record ScheduleView(
        ScheduleSpec spec, ScheduleRecord row, List<Instant> nextFireTimes, List<TickRecord> recentTicks) {}
