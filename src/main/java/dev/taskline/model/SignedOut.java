package dev.taskline.model;

import java.time.Instant;
import java.util.Map;

/**
 * The dashboard sessions signed out before they expired, as the journal holds them: single sessions
 * by the digest of their id (with their key and when each would have expired), and keys whose every session opened
 * before an instant is signed out (by key id, with that instant).
 */
public record SignedOut(Map<String, Single> sessions, Map<String, Instant> keysBefore) {

    /** One session signed out: the key it was opened with (null: unknown) and when it would have expired. */
    public record Single(String keyId, Instant expiresAt) {}

    public SignedOut {
        sessions = Map.copyOf(sessions);
        keysBefore = Map.copyOf(keysBefore);
    }
}
