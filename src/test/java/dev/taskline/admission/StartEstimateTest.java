package dev.taskline.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.QueueConfig;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** When a task due now would start, as pure arithmetic on what the node knows of its queue. */
class StartEstimateTest {

    private static final Instant NOW = Instant.parse("2026-12-01T09:00:00Z");
    private static final QueueConfig.RateLimit NO_LIMIT = null;
    private static final double NO_RUN_YET = Double.NaN;

    private static Duration wait(
            int ahead, int free, int slots, double completions, double meanRunMs, QueueConfig.RateLimit limit) {
        return StartEstimate.of(ahead, free, slots, completions, meanRunMs, limit)
                .untilStart();
    }

    @Test
    void a_task_with_a_free_slot_and_nothing_before_it_starts_at_once_whatever_the_rates() {
        assertEquals(Duration.ZERO, wait(0, 1, 4, 0, NO_RUN_YET, NO_LIMIT));
        assertEquals(
                Duration.ZERO,
                wait(2, 3, 4, 0, NO_RUN_YET, NO_LIMIT),
                "three free slots take it and the two before it");
    }

    @Test
    void with_nothing_to_go_by_the_wait_is_unknown_and_any_deadline_is_met() {
        StartEstimate estimate = StartEstimate.of(500, 0, 2, 0, NO_RUN_YET, NO_LIMIT);
        assertFalse(estimate.known());
        assertNull(estimate.startAt(NOW));
        assertTrue(estimate.meets(NOW, NOW.plusMillis(1)));
        assertEquals(RetryAfter.UNKNOWN_RATE_SECONDS, estimate.retryAfterSeconds(NOW, NOW.plusMillis(1)));
    }

    @Test
    void the_observed_completions_pace_the_slots_that_must_free_before_it() {
        // Three before it, no free slot: four slots must free, two a second.
        assertEquals(Duration.ofSeconds(2), wait(3, 0, 2, 2.0, NO_RUN_YET, NO_LIMIT));
        // One slot free takes the first of the three: three more must free.
        assertEquals(Duration.ofMillis(1500), wait(3, 1, 2, 2.0, NO_RUN_YET, NO_LIMIT));
    }

    @Test
    void slots_over_the_mean_run_time_stand_in_when_the_queue_was_idle_for_much_of_the_window() {
        // 0.1 completions a second were seen, but two slots of 1 s handlers finish two a second when busy.
        assertEquals(Duration.ofSeconds(2), wait(3, 0, 2, 0.1, 1000, NO_LIMIT));
        // And the observed pace, when faster, is the one taken: the estimate leans towards sooner.
        assertEquals(Duration.ofMillis(400), wait(3, 0, 2, 10, 1000, NO_LIMIT));
        assertEquals(Duration.ofSeconds(4), wait(3, 0, 2, 0, 2000, NO_LIMIT), "no completion in the window");
    }

    @Test
    void handlers_too_short_to_measure_start_everything_at_once() {
        assertEquals(Duration.ZERO, wait(10_000, 0, 4, 0, 0, NO_LIMIT));
    }

    @Test
    void a_rate_limit_paces_the_task_even_with_free_slots() {
        QueueConfig.RateLimit fivePerSecond = new QueueConfig.RateLimit(5, 1_000, false);
        assertEquals(
                Duration.ofSeconds(2),
                wait(10, 20, 20, 0, NO_RUN_YET, fivePerSecond),
                "start 11 comes two windows after the first five");
        assertEquals(
                Duration.ofSeconds(2),
                wait(10, 0, 2, 0, NO_RUN_YET, fivePerSecond),
                "the limit alone, with no pace known");
        assertEquals(
                Duration.ofSeconds(11),
                wait(10, 0, 1, 1, NO_RUN_YET, new QueueConfig.RateLimit(100, 1_000, false)),
                "the slower of the two");
    }

    @Test
    void a_window_may_be_spent_at_once_so_a_budget_ahead_proves_no_wait_until_it_is_full() {
        QueueConfig.RateLimit hundredPerMinute = new QueueConfig.RateLimit(100, 60_000, false);
        assertEquals(
                Duration.ZERO, wait(99, 100, 100, 0, NO_RUN_YET, hundredPerMinute), "start 100 of 100 in the window");
        assertEquals(
                Duration.ofMinutes(1), wait(100, 200, 200, 0, NO_RUN_YET, hundredPerMinute), "start 101: the next");
        assertEquals(Duration.ofMinutes(2), wait(250, 300, 300, 0, NO_RUN_YET, hundredPerMinute));
    }

    @Test
    void a_deadline_is_met_up_to_the_millisecond_and_a_miss_says_when_to_come_back() {
        StartEstimate twoSeconds = StartEstimate.of(3, 0, 2, 2.0, NO_RUN_YET, NO_LIMIT);
        assertEquals(NOW.plusSeconds(2), twoSeconds.startAt(NOW));
        assertTrue(twoSeconds.meets(NOW, NOW.plusSeconds(2)));
        assertFalse(twoSeconds.meets(NOW, NOW.plusMillis(1999)));
        assertEquals(1, twoSeconds.retryAfterSeconds(NOW, NOW.plusMillis(1999)), "never less than a second");
        assertEquals(2, twoSeconds.retryAfterSeconds(NOW, NOW.plusMillis(500)), "missed by 1.5 s");
        StartEstimate hours = StartEstimate.of(36_000, 0, 1, 1, NO_RUN_YET, NO_LIMIT);
        assertEquals(RetryAfter.MAX_SECONDS, hours.retryAfterSeconds(NOW, NOW.plusSeconds(1)));
    }
}
