package dev.taskline.auth;

import dev.taskline.config.AuthConfig;
import java.nio.charset.StandardCharsets;
import java.security.MessageDigest;
import java.security.NoSuchAlgorithmException;
import java.security.SecureRandom;
import java.util.Base64;
import java.util.HashMap;
import java.util.HexFormat;
import java.util.Map;

/**
 * The API keys, known by the SHA-256 of their secrets: those of the config, and those issued
 * through the API (read from the journal every second, so that an issue or a revocation reaches
 * every node within it). A secret is 32 random bytes, so a fast hash is the right one (a slow one
 * guards guessable passwords, which these are not), and nothing that could open the API is
 * stored. Thread-safe: the issued keys are swapped whole.
 */
public final class ApiKeys {

    /** What every secret starts with, so that a leaked one is recognised (by scanners, by people). */
    public static final String PREFIX = "tl_";

    private final Map<String, AuthConfig.Key> byHash = new HashMap<>();
    private final Map<String, AuthConfig.Key> byId = new HashMap<>();
    private volatile Map<String, AuthConfig.Key> issuedByHash = Map.of();
    private volatile Map<String, AuthConfig.Key> issuedById = Map.of();

    public ApiKeys(AuthConfig config) {
        config.keys().forEach(key -> {
            byHash.put(key.hash(), key);
            byId.put(key.id(), key);
        });
    }

    /** Whether any key exists, in the config or issued: then every request must name one. */
    public boolean enabled() {
        return !byHash.isEmpty() || !issuedByHash.isEmpty();
    }

    /** Whether the config holds any key: auth is on whatever the journal holds. */
    public boolean anyConfigured() {
        return !byId.isEmpty();
    }

    /** Whether the config holds an admin key: one no API call can take away. */
    public boolean adminConfigured() {
        return byId.values().stream().anyMatch(key -> key.scopes().contains("admin"));
    }

    /** Whether {@code id} is a key of the config (which only the config can change). */
    public boolean configured(String id) {
        return byId.containsKey(id);
    }

    /** The live issued keys, as the journal holds them now; those of the config keep precedence. */
    public void replaceIssued(java.util.List<AuthConfig.Key> keys) {
        Map<String, AuthConfig.Key> hashes = new HashMap<>();
        Map<String, AuthConfig.Key> ids = new HashMap<>();
        for (AuthConfig.Key key : keys) {
            if (!byId.containsKey(key.id())) {
                hashes.put(key.hash(), key);
                ids.put(key.id(), key);
            }
        }
        issuedById = Map.copyOf(ids);
        issuedByHash = Map.copyOf(hashes);
    }

    /** The key of this id, or null (a session names its key by id, and ends with it). */
    public AuthConfig.Key byId(String id) {
        AuthConfig.Key key = byId.get(id);
        return key != null ? key : issuedById.get(id);
    }

    /** The key whose secret this is, or null. */
    public AuthConfig.Key find(String secret) {
        if (secret == null || !secret.startsWith(PREFIX) || secret.length() > 256) {
            return null;
        }
        String hash = hash(secret);
        AuthConfig.Key key = byHash.get(hash);
        if (key == null) {
            key = issuedByHash.get(hash);
        }
        // The lookup is by a hash the caller cannot steer; the comparison is constant-time anyway.
        return key != null
                        && MessageDigest.isEqual(
                                key.hash().getBytes(StandardCharsets.US_ASCII),
                                hash.getBytes(StandardCharsets.US_ASCII))
                ? key
                : null;
    }

    /** {@code sha256:<hex>} of a secret: what the configuration holds for it. */
    public static String hash(String secret) {
        try {
            byte[] digest = MessageDigest.getInstance("SHA-256").digest(secret.getBytes(StandardCharsets.UTF_8));
            return "sha256:" + HexFormat.of().formatHex(digest);
        } catch (NoSuchAlgorithmException e) {
            throw new IllegalStateException("every JVM has SHA-256", e);
        }
    }

    /** An id for a key its maker did not name: the start of its secret, which says nothing of the rest. */
    public static String idFor(String secret) {
        return "key-" + secret.substring(PREFIX.length(), PREFIX.length() + 8);
    }

    /** A new secret: the prefix and 32 random bytes, URL-safe Base64. */
    public static String newSecret(SecureRandom random) {
        byte[] bytes = new byte[32];
        random.nextBytes(bytes);
        return PREFIX + Base64.getUrlEncoder().withoutPadding().encodeToString(bytes);
    }
}
