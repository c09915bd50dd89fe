package dev.taskline.auth;

import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.Base64;

/**
 * The dashboard's session: a browser signs in once with a key and then holds a cookie (HttpOnly,
 * SameSite=Strict) naming that key's id, an expiry and a CSRF value, signed with the nodes' shared
 * secret. Nothing of the key itself is in it, and a key removed from the config ends its sessions;
 * signing out ends one (see {@link SessionRevocations}).
 * A request that changes something must also send the CSRF value in a header, which a page of
 * another site cannot read.
 */
public final class SessionTokens {

    public static final String COOKIE = "taskline_session";
    public static final long TTL_SECONDS = 12 * 3600;
    private static final String VERSION = "c1";

    /**
     * A session: the key it was opened with, the value its changes must echo (random, so it is the
     * session's id too), and when it expires (epoch seconds).
     */
    public record Session(String keyId, String csrf, long expiresAt) {

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

    /** A new session's cookie value, for {@code keyId}, and its CSRF value. */
    public String[] open(String keyId) {
        byte[] bytes = new byte[18];
        random.nextBytes(bytes);
        String csrf = Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
        long expires = clock.instant().getEpochSecond() + TTL_SECONDS;
        return new String[] {signer.signFields(VERSION, keyId, Long.toString(expires), csrf), csrf};
    }

    /** The session a cookie value holds, or null when it is garbled, forged or expired. */
    public Session verify(String cookie) {
        String[] parts = signer.openFields(cookie);
        if (parts == null || parts.length != 4 || !parts[0].equals(VERSION)) {
            return null;
        }
        try {
            long expires = Long.parseLong(parts[2]);
            return expires < clock.instant().getEpochSecond() ? null : new Session(parts[1], parts[3], expires);
        } catch (NumberFormatException e) {
            return null;
        }
    }
}
