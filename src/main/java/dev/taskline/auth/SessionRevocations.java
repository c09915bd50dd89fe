package dev.taskline.auth;

import dev.taskline.model.SignedOut;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.HexFormat;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * The dashboard sessions signed out before they expired: single sessions by the digest of their id,
 * and, for a key that signed out more than {@link #MOST_PER_KEY} sessions within their lifetime, every
 * session that key opened before a time. A signed-out cookie is refused though its signature holds.
 * Kept in the journal, read by every node every second with the keys, and added to here at once by
 * the node that signs one out. A revocation is never undone, so what a read brings is added to what
 * is known, never put in its place (a read begun before a sign-out committed would otherwise forget
 * it for a second); one goes only once its sessions have expired anyway. Thread-safe: sign-outs are
 * added one by one, never by copying all that is known (a key signing in and out in a loop would
 * make each sign-out cost more than the last).
 */
public final class SessionRevocations {

    /** Single sign-outs a key may hold before its next signs out all its older sessions at once. */
    public static final int MOST_PER_KEY = 1_000;

    private static final Duration SESSION_TTL = Duration.ofSeconds(SessionTokens.TTL_SECONDS);

    private final Clock clock;
    private final Map<String, SignedOut.Single> sessions = new ConcurrentHashMap<>();
    private final Map<String, Instant> keysBefore = new ConcurrentHashMap<>();

    public SessionRevocations(Clock clock) {
        this.clock = clock;
    }

    /** How long a session lives: what a key-wide sign-out is kept for. */
    public static Duration sessionTtl() {
        return SESSION_TTL;
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

    public boolean revoked(SessionTokens.Session session) {
        return openedBefore(session.keyId(), Instant.ofEpochSecond(session.expiresAt()))
                || sessions.containsKey(digest(session.csrf()));
    }

    /**
     * Whether the key's sessions opened before a time are all signed out, and this one (expiring at
     * {@code expiresAt}) was opened before it. Strictly before, to the second: a browser signing in
     * again in the second of the sign-out keeps its new session.
     */
    private boolean openedBefore(String keyId, Instant expiresAt) {
        Instant before = keyId == null ? null : keysBefore.get(keyId);
        return before != null && expiresAt.minus(SESSION_TTL).isBefore(before.truncatedTo(ChronoUnit.SECONDS));
    }

    /**
     * Adds what the journal holds now, forgetting what has expired and the single sign-outs a key-wide
     * one now covers: what is held stays within the journal's bound per key.
     */
    public void merge(SignedOut fromJournal) {
        sessions.putAll(fromJournal.sessions());
        fromJournal
                .keysBefore()
                .forEach((key, before) -> keysBefore.merge(key, before, (a, b) -> a.isAfter(b) ? a : b));
        Instant now = clock.instant();
        keysBefore.values().removeIf(before -> !before.plus(SESSION_TTL).isAfter(now));
        sessions.values()
                .removeIf(
                        single -> !single.expiresAt().isAfter(now) || openedBefore(single.keyId(), single.expiresAt()));
    }

    /** A session this node signed out: refused here at once, before the next read of the journal. */
    public void add(String digest, String keyId, Instant expiresAt) {
        sessions.put(digest, new SignedOut.Single(keyId, expiresAt));
    }

    /** How many single sign-outs are held: what the bound per key keeps small. */
    public int held() {
        return sessions.size();
    }
}
