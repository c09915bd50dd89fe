package dev.taskline.auth;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A revocation is never undone by a read that did not see it yet, and goes once its session has expired. */
class SessionRevocationsTest {

    @Test
    void a_read_adds_to_what_is_known_and_expiry_alone_removes() {
        MutableClock clock = new MutableClock(Instant.parse("2026-12-02T10:00:00Z"));
        SessionRevocations revocations = new SessionRevocations(clock);
        Instant inAnHour = clock.instant().plus(Duration.ofHours(1));
        revocations.add(SessionRevocations.digest("signed-out-here"), inAnHour);
        revocations.merge(Map.of(SessionRevocations.digest("signed-out-there"), inAnHour.plus(Duration.ofMinutes(10))));
        assertTrue(revocations.revoked("signed-out-here"), "a read begun before this node's sign-out committed");
        assertTrue(revocations.revoked("signed-out-there"));
        assertFalse(revocations.revoked("still-open"));

        clock.advance(Duration.ofMinutes(61));
        revocations.merge(Map.of());
        assertFalse(revocations.revoked("signed-out-here"), "its cookie has expired anyway");
        assertTrue(revocations.revoked("signed-out-there"));
    }
}
