package dev.taskline.handler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;

import java.time.Instant;
import org.junit.jupiter.api.Test;

/** How a push target's Retry-After is read: a delay in seconds or an HTTP date. */
class PushRetryAfterTest {

    private static final Instant NOW = Instant.parse("2026-12-01T10:00:00Z");

    @Test
    void a_delay_in_seconds_is_taken_as_it_is() {
        assertEquals(120L, PushHandler.retryAfter("120", NOW));
        assertEquals(0L, PushHandler.retryAfter(" 0 ", NOW));
    }

    @Test
    void an_http_date_is_the_time_left_until_it() {
        assertEquals(90L, PushHandler.retryAfter("Tue, 01 Dec 2026 10:01:30 GMT", NOW));
        assertEquals(0L, PushHandler.retryAfter("Tue, 01 Dec 2026 09:00:00 GMT", NOW), "a date past: no delay");
    }

    @Test
    void anything_else_is_no_retry_after() {
        assertNull(PushHandler.retryAfter(null, NOW));
        assertNull(PushHandler.retryAfter("-5", NOW));
        assertNull(PushHandler.retryAfter("soon", NOW));
        assertNull(PushHandler.retryAfter("1.5", NOW));
        assertNull(PushHandler.retryAfter("9999999999", NOW), "past nine digits: not a delay we take");
    }
}
