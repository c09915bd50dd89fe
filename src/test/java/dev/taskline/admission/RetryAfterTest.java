package dev.taskline.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class RetryAfterTest {

    @Test
    void a_queue_that_finished_nothing_lately_gets_the_unknown_rate_fallback() {
        assertEquals(RetryAfter.UNKNOWN_RATE_SECONDS, RetryAfter.seconds(10, 0.0));
        assertEquals(RetryAfter.UNKNOWN_RATE_SECONDS, RetryAfter.seconds(10, Double.NaN));
        assertEquals(RetryAfter.UNKNOWN_RATE_SECONDS, RetryAfter.seconds(10, -3.0));
    }

    @Test
    void the_wait_is_the_backlog_divided_by_the_rate_rounded_up() {
        assertEquals(4, RetryAfter.seconds(10, 3.0));
        assertEquals(5, RetryAfter.seconds(10, 2.0));
        assertEquals(2, RetryAfter.seconds(3, 2.0));
    }

    @Test
    void an_empty_backlog_still_waits_for_one_completion() {
        // A request that exactly fills the queue must still wait for one place to free up.
        assertEquals(4, RetryAfter.seconds(0, 0.25));
        assertEquals(4, RetryAfter.seconds(-7, 0.25));
    }

    @Test
    void a_fast_queue_is_never_told_to_retry_in_under_one_second() {
        assertEquals(RetryAfter.MIN_SECONDS, RetryAfter.seconds(1, 1_000.0));
        assertEquals(RetryAfter.MIN_SECONDS, RetryAfter.seconds(1, Double.POSITIVE_INFINITY));
    }

    @Test
    void a_slow_queue_is_never_told_to_wait_over_five_minutes() {
        assertEquals(RetryAfter.MAX_SECONDS, RetryAfter.seconds(1_000_000, 1.0));
        assertEquals(RetryAfter.MAX_SECONDS, RetryAfter.seconds(1, 0.001));
        assertEquals(RetryAfter.MAX_SECONDS, RetryAfter.seconds(Long.MAX_VALUE, Double.MIN_VALUE));
    }

    @Test
    void the_clamps_are_one_and_three_hundred_seconds() {
        assertEquals(1, RetryAfter.MIN_SECONDS);
        assertEquals(300, RetryAfter.MAX_SECONDS);
        assertEquals(300, RetryAfter.seconds(300, 1.0));
        assertEquals(300, RetryAfter.seconds(301, 1.0));
    }
}
