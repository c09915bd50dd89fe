package dev.taskline.auth;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.SignedOut;
import dev.taskline.testing.MutableClock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import org.junit.jupiter.api.Test;

/**
 * A revocation is never undone by a read that did not see it yet, and goes once its session has
 * expired; a key-wide sign-out covers the key's sessions opened before it, and what it covers is no
 * longer held one by one.
 */
class SessionRevocationsTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-02T10:00:00Z"));

    private SessionTokens.Session opened(String id, String keyId, Instant at) {
        return new SessionTokens.Session(
                keyId, "digest", id, at.plusSeconds(SessionTokens.TTL_SECONDS).getEpochSecond());
    }

    @Test
    void a_read_adds_to_what_is_known_and_expiry_alone_removes() {
        SessionRevocations revocations = new SessionRevocations(clock);
        Instant anHourAgo = clock.instant().minus(Duration.ofHours(11));
        SessionTokens.Session here = opened("signed-out-here", "k", anHourAgo);
        SessionTokens.Session there = opened("signed-out-there", "k", anHourAgo.plus(Duration.ofMinutes(10)));
        revocations.add(SessionRevocations.digest(here.csrf()), "k", Instant.ofEpochSecond(here.expiresAt()));
        revocations.merge(new SignedOut(
                Map.of(
                        SessionRevocations.digest(there.csrf()),
                        new SignedOut.Single("k", Instant.ofEpochSecond(there.expiresAt()))),
                Map.of()));
        assertTrue(revocations.revoked(here), "a read begun before this node's sign-out committed");
        assertTrue(revocations.revoked(there));
        assertFalse(revocations.revoked(opened("still-open", "k", anHourAgo)));

        clock.advance(Duration.ofMinutes(61));
        revocations.merge(new SignedOut(Map.of(), Map.of()));
        assertEquals(1, revocations.held(), "the first cookie has expired anyway");
        assertTrue(revocations.revoked(there));
    }

    @Test
    void a_key_wide_sign_out_covers_older_sessions_of_that_key_alone_and_replaces_their_single_entries() {
        SessionRevocations revocations = new SessionRevocations(clock);
        Instant earlier = clock.instant().minus(Duration.ofMinutes(30));
        for (int i = 0; i < 50; i++) {
            revocations.add(
                    SessionRevocations.digest("s" + i), "looper", earlier.plusSeconds(SessionTokens.TTL_SECONDS));
        }
        SessionTokens.Session otherKey = opened("other", "other-key", earlier);
        revocations.add(SessionRevocations.digest("other"), "other-key", Instant.ofEpochSecond(otherKey.expiresAt()));
        Instant floor = clock.instant().plusMillis(400);
        revocations.merge(new SignedOut(Map.of(), Map.of("looper", floor)));

        assertEquals(1, revocations.held(), "the floor stands for the looper's fifty");
        assertTrue(revocations.revoked(opened("s7", "looper", earlier)));
        assertTrue(revocations.revoked(opened("never-signed-out", "looper", earlier)), "opened before the floor");
        assertFalse(
                revocations.revoked(opened("again", "looper", clock.instant())),
                "signed in again in the floor's own second");
        assertFalse(revocations.revoked(opened("fresh", "other-key", earlier)), "another key's sessions stand");
        assertTrue(revocations.revoked(otherKey));

        revocations.merge(new SignedOut(Map.of(), Map.of("looper", floor.minusSeconds(60))));
        assertTrue(
                revocations.revoked(opened("never-signed-out", "looper", earlier)), "an older read does not undo it");

        clock.advance(Duration.ofHours(12).plusSeconds(1));
        revocations.merge(new SignedOut(Map.of(), Map.of()));
        assertFalse(revocations.revoked(opened("x", "looper", clock.instant().minus(Duration.ofHours(1)))));
    }
}
