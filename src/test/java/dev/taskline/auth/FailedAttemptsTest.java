package dev.taskline.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import org.junit.jupiter.api.Test;

/** The failure count's window and its bound on memory, which a flood must not turn into a reset of everyone. */
class FailedAttemptsTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-02T10:00:00Z"));

    @Test
    void past_the_bound_it_is_blocked_until_the_minute_from_its_first_failure_is_over() {
        FailedAttempts failures = new FailedAttempts(3, clock);
        for (int i = 0; i < 3; i++) {
            assertEquals(0, failures.blockedForSeconds("a"));
            failures.failed("a");
            clock.advance(Duration.ofSeconds(10));
        }
        assertEquals(30, failures.blockedForSeconds("a"), "the window began 30 s ago");
        assertEquals(0, failures.blockedForSeconds("b"));
        clock.advance(Duration.ofSeconds(30));
        assertEquals(0, failures.blockedForSeconds("a"), "a new minute");
        failures.failed("a");
        assertEquals(0, failures.blockedForSeconds("a"), "counted from one again");
    }

    @Test
    void a_flood_of_new_entries_pushes_out_the_oldest_windows_and_keeps_a_blocked_newer_one() {
        FailedAttempts failures = new FailedAttempts(3, clock);
        failures.failed("first");
        clock.advance(Duration.ofSeconds(1));
        for (int i = 0; i < 3; i++) {
            failures.failed("guesser");
        }
        for (int i = 0; i < FailedAttempts.MAX_ENTRIES - 1; i++) {
            failures.failed("made-up-" + i);
        }
        assertEquals(FailedAttempts.MAX_ENTRIES, failures.size());
        assertEquals(60, failures.blockedForSeconds("guesser"), "still held: only the oldest window went");
        failures.failed("first");
        assertEquals(0, failures.blockedForSeconds("first"));

        clock.advance(Duration.ofSeconds(61));
        failures.failed("later");
        assertEquals(1, failures.size(), "windows that are over go as new ones come");
    }
}
