package dev.taskline.auth;

import java.nio.charset.StandardCharsets;
import java.security.GeneralSecurityException;
import java.security.MessageDigest;
import java.util.Base64;
import javax.crypto.Mac;
import javax.crypto.spec.SecretKeySpec;

/**
 * Fields signed with a secret the nodes of one journal share (HMAC-SHA256), as a URL-safe token
 * {@code base64(text).base64(mac)} whose text is the fields joined by {@code |}: what lease, stream
 * and session tokens are made of. Any node can open a token another signed; no one without the
 * secret can make or alter one.
 */
public final class Signer {

    private static final Base64.Encoder ENCODE = Base64.getUrlEncoder().withoutPadding();
    private static final Base64.Decoder DECODE = Base64.getUrlDecoder();
    /** Longer than any token this node makes; a longer text is not decoded at all. */
    private static final int MAX_TOKEN = 1_024;

    private final SecretKeySpec key;
    // A Mac is not thread-safe and costs a provider look-up to make: one per thread, made once.
    private final ThreadLocal<Mac> macs = ThreadLocal.withInitial(this::newMac);

    public Signer(byte[] secret) {
        this.key = new SecretKeySpec(secret.clone(), "HmacSHA256");
    }

    private String sign(String text) {
        byte[] bytes = text.getBytes(StandardCharsets.UTF_8);
        return ENCODE.encodeToString(bytes) + "."
                + ENCODE.encodeToString(macs.get().doFinal(bytes));
    }

    /**
     * A token of {@code fields} (the first one its format's version), joined by {@code |}: no field
     * may contain one. What every kind of token here is made of.
     */
    public String signFields(String... fields) {
        return sign(String.join("|", fields));
    }

    /** The fields of a token made by {@link #signFields}, or null when its signature is not ours. */
    public String[] openFields(String token) {
        String text = open(token);
        return text == null ? null : text.split("\\|", -1);
    }

    /** The text a token holds when its signature is ours, else null (garbled, forged, too long). */
    private String open(String token) {
        if (token == null || token.length() > MAX_TOKEN) {
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
        return MessageDigest.isEqual(macs.get().doFinal(body), signature)
                ? new String(body, StandardCharsets.UTF_8)
                : null;
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
