package dev.taskline.worker;

import dev.taskline.journal.Lease;
import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import java.util.UUID;
import java.util.regex.Pattern;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * The lease a remote worker holds, as an opaque token: the task, the lease version, the attempt,
 * the task's most attempts, its queue and the worker's name, signed (HMAC-SHA256) with a secret the nodes of
 * a journal share. A token cannot be turned into another task's or version's, and any node can
 * check one another node issued. The journal still fences every write by version and worker: the
 * signature only keeps a caller from naming a lease it was never given.
 */
public final class LeaseTokens {

  /** A remote worker's name: what it may call itself, nothing that needs escaping. */
  public static final Pattern WORKER = Pattern.compile("[A-Za-z0-9._:@-]{1,128}");
  private static final String VERSION = "v1";
  private static final Base64.Encoder ENCODE = Base64.getUrlEncoder().withoutPadding();
  private static final Base64.Decoder DECODE = Base64.getUrlDecoder();

  private final SecretKeySpec key;
  // A Mac is not thread-safe and costs a provider look-up to make: one per thread, made once.
  private final ThreadLocal<Mac> macs = ThreadLocal.withInitial(this::newMac);

  public LeaseTokens(byte[] secret) {
    this.key = new SecretKeySpec(secret.clone(), "HmacSHA256");
  }

  /** What a token says, once its signature holds: the lease, the task's queue and its most attempts. */
  public record Token(Lease lease, String queue, int maxAttempts) {
  }

  public String sign(Lease lease, String queue, int maxAttempts) {
    String body = String.join("|", VERSION, lease.taskId().toString(), Long.toString(lease.version()),
        Integer.toString(lease.attempt()), Integer.toString(maxAttempts), queue, lease.workerId());
    byte[] bytes = body.getBytes(StandardCharsets.UTF_8);
    return ENCODE.encodeToString(bytes) + "." + ENCODE.encodeToString(mac(bytes));
  }

  /** @throws InvalidLeaseTokenException when the text is not a token this journal's nodes signed */
  public Token verify(String token) {
    if (token == null || token.length() > 1_024) {
      throw new InvalidLeaseTokenException("lease must be a token from a claim");
    }
    int dot = token.indexOf('.');
    byte[] body;
    byte[] signature;
    try {
      body = DECODE.decode(token.substring(0, Math.max(dot, 0)));
      signature = DECODE.decode(token.substring(dot + 1));
    } catch (IllegalArgumentException e) {
      throw new InvalidLeaseTokenException("lease is not a token from a claim");
    }
    if (dot < 0 || !MessageDigest.isEqual(mac(body), signature)) {
      throw new InvalidLeaseTokenException("lease is not a token from a claim");
    }
    String[] parts = new String(body, StandardCharsets.UTF_8).split("\\|", -1);
    try {
      if (parts.length != 7 || !parts[0].equals(VERSION)) {
        throw new IllegalArgumentException(parts[0]);
      }
      Lease lease = new Lease(UUID.fromString(parts[1]), parts[6], Long.parseLong(parts[2]),
          Integer.parseInt(parts[3]));
      return new Token(lease, parts[5], Integer.parseInt(parts[4]));
    } catch (IllegalArgumentException e) {
      // Signed by us, so never garbled; a token of another format version lands here.
      throw new InvalidLeaseTokenException("lease is a token this node cannot read");
    }
  }

  private byte[] mac(byte[] body) {
    return macs.get().doFinal(body);
  }

  private Mac newMac() {
    try {
      Mac mac = Mac.getInstance("HmacSHA256");
      mac.init(key);
      return mac;
    } catch (GeneralSecurityException e) {
      throw new IllegalStateException("the JVM has no HmacSHA256", e);
    }
  }
}
