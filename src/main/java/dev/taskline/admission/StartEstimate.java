package dev.taskline.admission;

import dev.taskline.config.QueueConfig;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;

/**
 * When a task due now would start on this node, from what the node knows of its queue: how many
 * tasks start before it, how many slots are free, and how fast slots free up. It is meant to refuse
 * only on evidence, so every part of it leans towards "sooner": the tasks counted before it are a
 * lower bound (see {@code QueueRoom.outlook}), and the pace is the faster of two readings. One is
 * the completions of the last seconds, which is low when the queue was idle for part of them; the
 * other is the slots over the handlers' mean run time, which is what the slots do when busy. With
 * neither (nothing has finished here yet) the wait is unknown and the task is taken.
 *
 * @param untilStart how long until it would start; null when there is nothing to go by
 */
public record StartEstimate(Duration untilStart) {

    static final StartEstimate UNKNOWN = new StartEstimate(null);

    /**
     * @param ahead                tasks that start before this one
     * @param freeSlots            slots free now
     * @param slots                the queue's slots on this node
     * @param completionsPerSecond tasks the queue finished per second lately; 0 for none
     * @param meanRunMillis        the handlers' mean run time; NaN while none has returned
     * @param limit                the queue's rate limit that every task before it shares; null for none
     */
    public static StartEstimate of(
            int ahead,
            int freeSlots,
            int slots,
            double completionsPerSecond,
            double meanRunMillis,
            QueueConfig.RateLimit limit) {
        // Starts are paced by a rate limit, if any, whatever the slots: this task is start number ahead
        // + 1, and a window holds at most the limit's tasks. The window may be empty now, so a window's
        // worth may start at once: the least wait it proves is a window for each full budget ahead.
        double byLimit = limit == null ? 0 : Math.floor((double) ahead / limit.tasks()) * limit.perMs() / 1000.0;
        // A slot must free for each task that starts before it beyond the free ones, and one for it.
        int releases = Math.max(0, ahead + 1 - freeSlots);
        double bySlots = 0;
        if (releases > 0) {
            double pace = Math.max(completionsPerSecond > 0 ? completionsPerSecond : 0, slotPace(slots, meanRunMillis));
            if (!(pace > 0)) {
                return byLimit > 0 ? ofSeconds(byLimit) : UNKNOWN;
            }
            bySlots = releases / pace;
        }
        return ofSeconds(Math.max(bySlots, byLimit));
    }

    /** Tasks per second the slots finish while busy; infinite for handlers too short to measure. */
    private static double slotPace(int slots, double meanRunMillis) {
        if (Double.isNaN(meanRunMillis) || meanRunMillis < 0) {
            return 0;
        }
        return meanRunMillis == 0 ? Double.POSITIVE_INFINITY : slots * 1000.0 / meanRunMillis;
    }

    private static StartEstimate ofSeconds(double seconds) {
        // Whole milliseconds, rounded up: the API shows them, and a deadline is met or not to the ms.
        return new StartEstimate(Duration.ofMillis((long) Math.min(Long.MAX_VALUE / 2, Math.ceil(seconds * 1000))));
    }

    public boolean known() {
        return untilStart != null;
    }

    /** When it would start, counted from {@code now}, to the microsecond as deadlines are kept; null when unknown. */
    public Instant startAt(Instant now) {
        return untilStart == null ? null : now.plus(untilStart).truncatedTo(ChronoUnit.MICROS);
    }

    /** Whether it would start by {@code startBy}; an unknown estimate meets any deadline. */
    public boolean meets(Instant now, Instant startBy) {
        return untilStart == null || !startAt(now).isAfter(startBy);
    }

    /**
     * How long a refused client should wait before it asks again with the same {@code startWithinMs}:
     * by how much this deadline is missed. For the backlog to lose that much of its wait, it has to work
     * for about that long.
     */
    public long retryAfterSeconds(Instant now, Instant startBy) {
        if (untilStart == null) {
            return RetryAfter.UNKNOWN_RATE_SECONDS;
        }
        long missedMs = Math.max(0, Duration.between(startBy, startAt(now)).toMillis());
        long seconds = (missedMs + 999) / 1000;
        return Math.max(RetryAfter.MIN_SECONDS, Math.min(RetryAfter.MAX_SECONDS, seconds));
    }
}
