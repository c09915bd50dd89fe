package dev.taskline.auth;

import java.time.Clock;
import java.util.UUID;

/**
 * Short-lived tokens that open one event stream, for browsers: {@code EventSource} cannot send an
 * {@code Authorization} header, so the answers that name a stream carry its URL with a token in
 * the query. A token is bound to the stream's kind (task, batch or flow), its id, the tenant it may see
 * and an expiry, signed with a secret the nodes of one journal share; it opens that stream and
 * nothing else, and only until it expires.
 */
public final class StreamTokens {

    public static final String SECRET = "stream-token";
    /** Long enough to open the stream from a page that just got the answer; a reconnect asks anew. */
    public static final long TTL_SECONDS = 600;

    private static final String VERSION = "s1";

    /** What a valid token grants: the stream of {@code kind} and {@code id}, as {@code tenant} (null: any). */
    public record Grant(String kind, UUID id, String tenant) {}

    private final Signer signer;
    private final Clock clock;

    public StreamTokens(byte[] secret, Clock clock) {
        this.signer = new Signer(secret);
        this.clock = clock;
    }

    /** A token for the stream of {@code kind} ("task", "batch" or "flow") {@code id}, seeing as {@code tenant}. */
    public String sign(String kind, UUID id, String tenant) {
        long expires = clock.instant().getEpochSecond() + TTL_SECONDS;
        return signer.signFields(VERSION, kind, id.toString(), tenant == null ? "" : tenant, Long.toString(expires));
    }

    /** What {@code token} grants, or null when it is garbled, forged, another version's or expired. */
    public Grant verify(String token) {
        String[] parts = signer.openFields(token);
        if (parts == null || parts.length != 5 || !parts[0].equals(VERSION)) {
            return null;
        }
        try {
            if (Long.parseLong(parts[4]) < clock.instant().getEpochSecond()) {
                return null;
            }
            return new Grant(parts[1], UUID.fromString(parts[2]), parts[3].isEmpty() ? null : parts[3]);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }
}
