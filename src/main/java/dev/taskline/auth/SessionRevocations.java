package dev.taskline.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.util.HashSet;
import java.util.HexFormat;
import java.util.Set;

/**
 * The dashboard sessions signed out before they expired, by the digest of their id: a signed-out
 * cookie is refused though its signature holds. Kept in the journal, read by every node every
 * second with the keys, and added to here at once by the node that signs one out. Thread-safe: the
 * set is swapped whole on a read, and written under a lock.
 */
public final class SessionRevocations {

    private volatile Set<String> revoked = Set.of();

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
        return revoked.contains(digest(sessionId));
    }

    /** The revocations the journal holds now (those of expired sessions are gone from it). */
    public synchronized void replace(Set<String> digests) {
        revoked = Set.copyOf(digests);
    }

    /** A session this node signed out: refused here at once, before the next read of the journal. */
    public synchronized void add(String digest) {
        Set<String> next = new HashSet<>(revoked);
        next.add(digest);
        revoked = Set.copyOf(next);
    }
}
