package dev.taskline.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;

/**
 * The dashboard's session: a browser signs in once with a key and then holds a cookie (HttpOnly,
 * SameSite=Strict) naming that key's id, an expiry and a CSRF value, signed with the nodes' shared
 * secret. Nothing of the key's secret is in it; a key removed, or given a new secret, ends its
 * sessions; signing out ends one (see {@link SessionRevocations}).
 * A request that changes something must also send the CSRF value in a header, which a page of
 * another site cannot read.
 */
public final class SessionTokens {

    public static final String COOKIE = "taskline_session";
    public static final long TTL_SECONDS = 12 * 3600;
    // c2: the session names the key's hash too, so that a key given a new secret ends its sessions.
    private static final String VERSION = "c2";

    /**
     * A session: the key it was opened with (its id, and a digest of its hash then), the value its
     * changes must echo (random, so it is the session's id too), and when it expires (epoch seconds).
     */
    public record Session(String keyId, String keyDigest, String csrf, long expiresAt) {

        /** Whether the session was opened with the key that now has {@code keyHash}. */
        public boolean openedWith(String keyHash) {
            return MessageDigest.isEqual(
                    keyDigest.getBytes(StandardCharsets.US_ASCII),
                    SessionTokens.keyDigest(keyHash).getBytes(StandardCharsets.US_ASCII));
        }

        /** Whether {@code given} is the session's CSRF value, compared in constant time. */
        public boolean csrfMatches(String given) {
            return given != null
                    && MessageDigest.isEqual(
                            csrf.getBytes(StandardCharsets.US_ASCII), given.getBytes(StandardCharsets.US_ASCII));
        }
    }

    private final Signer signer;
    private final Clock clock;
    private final SecureRandom random = new SecureRandom();

    public SessionTokens(byte[] secret, Clock clock) {
        this.signer = new Signer(secret);
        this.clock = clock;
    }

    /** A new session's cookie value, for the key {@code keyId} whose hash is {@code keyHash}, and its CSRF value. */
    public String[] open(String keyId, String keyHash) {
        byte[] bytes = new byte[18];
        random.nextBytes(bytes);
        String csrf = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        long expires = clock.instant().getEpochSecond() + TTL_SECONDS;
        return new String[] {signer.signFields(VERSION, keyId, keyDigest(keyHash), Long.toString(expires), csrf), csrf};
    }

    /** A short digest of a key's stored hash: enough to tell a new secret from the old, nothing to guess from. */
    static String keyDigest(String keyHash) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(keyHash.getBytes(StandardCharsets.UTF_8));
            return Base64.getUrlEncoder()
                    .withoutPadding()
                    .encodeToString(digest)
                    .substring(0, 16);
        } catch (java.security.NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** The session a cookie value holds, or null when it is garbled, forged or expired. */
    public Session verify(String cookie) {
        String[] parts = signer.openFields(cookie);
        if (parts == null || parts.length != 5 || !parts[0].equals(VERSION)) {
            return null;
        }
        try {
            long expires = Long.parseLong(parts[3]);
            return expires < clock.instant().getEpochSecond()
                    ? null
                    : new Session(parts[1], parts[2], parts[4], expires);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
