package dev.taskline.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.time.Clock;
import java.util.Base64;
import java.util.UUID;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Short-lived tokens that open one event stream, for browsers: {@code EventSource} cannot send an
 * {@code Authorization} header, so the answers that name a stream carry its URL with a token in
 * the query. A token is bound to the stream's kind (task or batch), its id, the tenant it may see
 * and an expiry, signed with a secret the nodes of one journal share; it opens that stream and
 * nothing else, and only until it expires.
 */
public final class StreamTokens {

  public static final String SECRET = "stream-token";
  /** Long enough to open the stream from a page that just got the answer; a reconnect asks anew. */
  public static final long TTL_SECONDS = 600;
  private static final String VERSION = "s1";
  private static final Base64.Encoder ENCODE = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder DECODE = Base64.getUrlDecoder();

  /** What a valid token grants: the stream of {@code kind} and {@code id}, as {@code tenant} (null: any). */
  public record Grant(String kind, UUID id, String tenant) {
  }

  private final SecretKeySpec key;
  private final Clock clock;
  private final ThreadLocal<Mac> macs = ThreadLocal.withInitial(this::newMac);

  public StreamTokens(byte[] secret, Clock clock) {
    this.key = new SecretKeySpec(secret, "HmacSHA256");
    this.clock = clock;
  }

  /** A token for the stream of {@code kind} ("task" or "batch") {@code id}, seeing as {@code tenant}. */
  public String sign(String kind, UUID id, String tenant) {
    long expires = clock.instant().getEpochSecond() + TTL_SECONDS;
    String body = String.join("|", VERSION, kind, id.toString(), tenant == null ? "" : tenant, Long.toString(expires));
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return ENCODE.encodeToString(bytes) + "." + ENCODE.encodeToString(macs.get().doFinal(bytes));
  }

  /** What {@code token} grants, or null when it is garbled, forged, another version's or expired. */
  public Grant verify(String token) {
    if (token == null || token.length() > 1_024) {
      return null;
    }
    int dot = token.indexOf('.');
    if (dot < 0) {
      return null;
    }
    byte[] body;
    byte[] signature;
    try {
      body = DECODE.decode(token.substring(0, dot));
      signature = DECODE.decode(token.substring(dot + 1));
    } catch (IllegalArgumentException e) {
      return null;
    }
    if (!MessageDigest.isEqual(macs.get().doFinal(body), signature)) {
      return null;
    }
    String[] parts = new String(body, StandardCharsets.UTF_8).split("\\|", -1);
    if (parts.length != 5 || !parts[0].equals(VERSION)) {
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

  private Mac newMac() {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("every JVM has HmacSHA256", e);
    }
  }
}
