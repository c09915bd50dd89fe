package dev.taskline.config;

import java.util.List;
import java.util.Set;
import java.util.regex.Pattern;

/**
 * Who may call the API. With no key configured, auth is off: every caller is anonymous, may do
 * everything and names its own tenant, which is acceptable only on a loopback address (a node on
 * another address refuses to start so unless {@code allowAnonymous} says it is meant).
 *
 * @param keys                the API keys, each stored as the SHA-256 of its secret
 * @param allowAnonymous      start without keys on a non-loopback address, on purpose
 * @param openMetrics         {@code /metrics} without a key (for a scraper on a trusted network)
 * @param maxFailuresPerMinute failed authentications one client address, or one key presented,
 *                            may make in a minute before its failures are answered 429; a key
 *                            that holds still gets in, so this sheds and flags guessing, which
 *                            only a key's randomness makes hopeless
 */
public record AuthConfig(List<Key> keys, boolean allowAnonymous, boolean openMetrics, int maxFailuresPerMinute) {

    public static final Set<String> SCOPES = Set.of("submit", "read", "work", "admin");
    static final Pattern ID = Pattern.compile("[A-Za-z0-9._:-]{1,64}");
    static final Pattern HASH = Pattern.compile("sha256:[0-9a-f]{64}");
    static final Pattern TENANT = Pattern.compile("[A-Za-z0-9._:@-]{1,128}");

    public AuthConfig {
        keys = List.copyOf(keys);
        if (maxFailuresPerMinute < 1) {
            throw new ConfigException("auth.maxFailuresPerMinute must be at least 1, got " + maxFailuresPerMinute);
        }
        if (keys.stream().map(Key::id).distinct().count() != keys.size()) {
            throw new ConfigException("auth.keys: two keys have the same id");
        }
        if (keys.stream().map(Key::hash).distinct().count() != keys.size()) {
            throw new ConfigException("auth.keys: two keys have the same hash");
        }
    }

    /** Auth off: no key. */
    public static AuthConfig off() {
        return new AuthConfig(List.of(), false, false, 20);
    }

    public boolean enabled() {
        return !keys.isEmpty();
    }

    /**
     * One API key.
     *
     * @param id     a name for logs and the journal, never the secret
     * @param hash   {@code sha256:<hex>} of the secret
     * @param tenant the only tenant it acts as and sees, or null: any (an admin key's)
     * @param scopes what it may do: submit, read, work, admin
     * @param queues the queues it may work (claim, heartbeat, complete, fail); empty: every one
     */
    public record Key(String id, String hash, String tenant, Set<String> scopes, Set<String> queues) {
        public Key {
            scopes = Set.copyOf(scopes);
            queues = Set.copyOf(queues);
            if (id == null || !ID.matcher(id).matches()) {
                throw new ConfigException(
                        "auth.keys: id must be 1 to 64 letters, digits, '.', '_', ':' or '-', got " + id);
            }
            String key = "auth.keys[" + id + "]";
            if (hash == null || !HASH.matcher(hash).matches()) {
                throw new ConfigException(key + ".hash must be sha256:<64 lowercase hex digits> (new-key prints one)");
            }
            if (tenant != null && !TENANT.matcher(tenant).matches()) {
                throw new ConfigException(key + ".tenant must be 1 to 128 letters, digits, '.', '_', ':', '@' or '-'");
            }
            if (scopes.isEmpty() || !SCOPES.containsAll(scopes)) {
                throw new ConfigException(key + ".scopes must name some of "
                        + String.join(", ", SCOPES.stream().sorted().toList()) + ", got " + scopes);
            }
            if (tenant != null && scopes.contains("admin")) {
                throw new ConfigException(key + ": an admin key acts across tenants and takes no tenant");
            }
        }
    }
}
