package dev.taskline.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import org.junit.jupiter.api.Test;

class BackoffTest {

    @Test
    void the_ceiling_doubles_with_each_failed_attempt_up_to_the_cap() {
        assertEquals(1_000, Backoff.ceilingMs(1, 1_000, 300_000));
        assertEquals(2_000, Backoff.ceilingMs(2, 1_000, 300_000));
        assertEquals(4_000, Backoff.ceilingMs(3, 1_000, 300_000));
        assertEquals(256_000, Backoff.ceilingMs(9, 1_000, 300_000));
        assertEquals(300_000, Backoff.ceilingMs(10, 1_000, 300_000));
    }

    @Test
    void huge_attempt_numbers_stay_at_the_cap_without_overflow() {
        assertEquals(300_000, Backoff.ceilingMs(64, 1_000, 300_000));
        assertEquals(300_000, Backoff.ceilingMs(1_000_000, 1_000, 300_000));
        assertEquals(Long.MAX_VALUE, Backoff.ceilingMs(100, Long.MAX_VALUE / 2, Long.MAX_VALUE));
    }

    @Test
    void full_jitter_draws_between_zero_and_the_ceiling() {
        assertEquals(0, Backoff.delayMs(3, 1_000, 300_000, 0.0));
        assertEquals(2_000, Backoff.delayMs(3, 1_000, 300_000, 0.5));
        assertEquals(4_000, Backoff.delayMs(3, 1_000, 300_000, 1.0));
        assertEquals(4_000, Backoff.delayMs(3, 1_000, 300_000, 7.0), "out-of-range draws are clamped");
    }

    @Test
    void a_zero_base_means_retry_at_once() {
        assertEquals(0, Backoff.delayMs(5, 0, 300_000, 1.0));
    }
}
