package dev.taskline.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Instant;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * The dashboard sessions signed out before they expired, by the digest of their id: a signed-out
 * cookie is refused though its signature holds. Kept in the journal, read by every node every
 * second with the keys, and added to here at once by the node that signs one out. A revocation is
 * never undone, so what a read brings is added to what is known, never put in its place (a read
 * begun before a sign-out committed would otherwise forget it for a second); one goes only once its
 * session has expired anyway. Thread-safe: the map is swapped whole, and written under a lock.
 */
public final class SessionRevocations {

    private final Clock clock;
    private volatile Map<String, Instant> revoked = Map.of();

    public SessionRevocations(Clock clock) {
        this.clock = clock;
    }

    /** The digest a session is revoked by: nothing of the session itself is stored. */
    public static String digest(String sessionId) {
        try {
            return HexFormat.of()
                    .formatHex(MessageDigest.getInstance("SHA-256").digest(sessionId.getBytes(StandardCharsets.UTF_8)));
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    public boolean revoked(String sessionId) {
        return revoked.containsKey(digest(sessionId));
    }

    /** Adds what the journal holds now (digests and their sessions' expiry), forgetting the expired. */
    public synchronized void merge(Map<String, Instant> fromJournal) {
        Instant now = clock.instant();
        Map<String, Instant> next = new HashMap<>(revoked);
        next.putAll(fromJournal);
        next.values().removeIf(expires -> !expires.isAfter(now));
        revoked = Map.copyOf(next);
    }

    /** A session this node signed out: refused here at once, before the next read of the journal. */
    public synchronized void add(String digest, Instant expiresAt) {
        Map<String, Instant> next = new HashMap<>(revoked);
        next.put(digest, expiresAt);
        revoked = Map.copyOf(next);
    }
}
