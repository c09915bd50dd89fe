package dev.taskline.schedule;

import java.time.Instant;
import java.util.ArrayList;
import java.util.List;

/**
 * Which of a schedule's ticks a node decides in one pass, and how: pure, so that the rules are
 * tested without a clock or a journal.
 *
 * <p>A node takes a schedule's ticks up after {@code cursor}, the newest tick decided (by any node,
 * as the journal said when it last read, or by this one since). Ticks up to {@code pastThrough}
 * came while this node was not evaluating the schedule (it started after the schedule was made, or
 * its passes stalled): they follow the schedule's {@link ScheduleSpec.CatchUp}. Ticks after it
 * are live: this node was there when they came due, and each fires, however late its pass (a
 * loaded machine must not lose ticks). A pass fires at most {@code chunk} ticks of a schedule (one
 * under {@code overlap: skip}, which decides a tick only once the one before it is in the journal)
 * and leaves the rest to the next pass.
 *
 * @param fire     ticks to fire, oldest first
 * @param missed   the newest of the ticks recorded missed in this pass, null for none
 * @param missedCount how many ticks {@code missed} stands for (the run from the oldest missed to it)
 * @param missedFirst the oldest of them
 * @param countCapped whether the run was longer than could be counted ({@code missedCount} is a floor)
 */
public record TickPlan(List<Instant> fire, Instant missed, long missedCount, Instant missedFirst, boolean countCapped) {

    /** Most ticks counted in one missed run; a longer one is recorded as "at least" this many. */
    static final int COUNT_CAP = 100_000;

    static final TickPlan NOTHING = new TickPlan(List.of(), null, 0, null, false);

    public boolean isEmpty() {
        return fire.isEmpty() && missed == null;
    }

    /**
     * @param maxCatchUp most past ticks {@code ALL} fires (the newest ones); older ones are missed
     */
    public static TickPlan of(
            ScheduleSpec spec, Instant cursor, Instant pastThrough, Instant now, int maxCatchUp, int chunk) {
        Cadence cadence = spec.cadence();
        int limit = spec.overlap() == ScheduleSpec.Overlap.SKIP ? 1 : chunk;
        List<Instant> fire = new ArrayList<>();
        Instant missed = null;
        Instant missedFirst = null;
        long missedCount = 0;
        boolean capped = false;
        Instant liveAfter = cursor;
        if (pastThrough != null && pastThrough.isAfter(cursor)) {
            Instant newest = cadence.previous(pastThrough.plusNanos(1));
            if (newest != null && newest.isAfter(cursor)) {
                // The oldest past tick to fire: none for NONE, the newest for LATEST, up to maxCatchUp for ALL.
                Instant firstToFire = switch (spec.catchUp()) {
                    case NONE -> null;
                    case LATEST -> newest;
                    case ALL -> oldestOfNewest(cadence, cursor, newest, maxCatchUp);
                };
                Instant missedThrough = firstToFire == null ? newest : cadence.previous(firstToFire);
                if (missedThrough != null && missedThrough.isAfter(cursor)) {
                    missed = missedThrough;
                    missedFirst = cadence.next(cursor);
                    long[] count = count(cadence, cursor, missedThrough);
                    missedCount = count[0];
                    capped = count[1] == 1;
                }
                if (firstToFire != null) {
                    for (Instant t = firstToFire;
                            t != null && !t.isAfter(newest) && fire.size() < limit;
                            t = cadence.next(t)) {
                        fire.add(t);
                    }
                    if (fire.size() == limit) {
                        return new TickPlan(fire, missed, missedCount, missedFirst, capped);
                    }
                }
            }
            liveAfter = pastThrough;
        }
        for (Instant t = cadence.next(liveAfter);
                t != null && !t.isAfter(now) && fire.size() < limit;
                t = cadence.next(t)) {
            fire.add(t);
        }
        if (fire.isEmpty() && missed == null) {
            return NOTHING;
        }
        return new TickPlan(fire, missed, missedCount, missedFirst, capped);
    }

    /** The oldest of the {@code n} newest ticks in (after, newest]. */
    private static Instant oldestOfNewest(Cadence cadence, Instant after, Instant newest, int n) {
        Instant oldest = newest;
        for (int i = 1; i < n; i++) {
            Instant before = cadence.previous(oldest);
            if (before == null || !before.isAfter(after)) {
                break;
            }
            oldest = before;
        }
        return oldest;
    }

    /** Ticks in (after, through], and 1 in the second place when there were more than {@link #COUNT_CAP}. */
    private static long[] count(Cadence cadence, Instant after, Instant through) {
        if (cadence instanceof Cadence.Every every) {
            long p = every.period().toMillis();
            return new long[] {Math.floorDiv(through.toEpochMilli(), p) - Math.floorDiv(after.toEpochMilli(), p), 0};
        }
        long n = 0;
        for (Instant t = cadence.next(after); t != null && !t.isAfter(through); t = cadence.next(t)) {
            if (++n == COUNT_CAP) {
                return new long[] {n, 1};
            }
        }
        return new long[] {n, 0};
    }
}
