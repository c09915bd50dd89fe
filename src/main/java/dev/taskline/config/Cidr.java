package dev.taskline.config;

import io.netty.util.NetUtil;

/**
 * A block of addresses, {@code 10.0.0.0/8} or {@code fd00::/8} (an address alone is its own block),
 * as {@code http.trustedProxies} lists them. Literal addresses only: a name is refused, as a name
 * can move.
 */
public record Cidr(byte[] network, int prefix) {

    public static Cidr parse(String text) {
        String trimmed = text.trim();
        int slash = trimmed.indexOf('/');
        byte[] bytes = literal(slash < 0 ? trimmed : trimmed.substring(0, slash));
        if (bytes == null) {
            throw new ConfigException(
                    "http.trustedProxies: " + text + " is not an address or a block such as 10.0.0.0/8");
        }
        int prefix;
        try {
            prefix = slash < 0 ? bytes.length * 8 : Integer.parseInt(trimmed.substring(slash + 1));
        } catch (NumberFormatException e) {
            throw new ConfigException("http.trustedProxies: " + text + " has no prefix length after the /");
        }
        if (prefix < 0 || prefix > bytes.length * 8) {
            throw new ConfigException(
                    "http.trustedProxies: " + text + " has a prefix of 0 to " + bytes.length * 8 + " bits");
        }
        return new Cidr(bytes, prefix);
    }

    /**
     * The bytes of an address literal, IPv4 in its four dotted parts or IPv6, or null: never looked
     * up (a text like {@code dead.beef} is a name, and a name is not asked of DNS), never a short
     * form such as {@code 10.1}.
     */
    public static byte[] literal(String text) {
        return NetUtil.createByteArrayFromIpAddressString(text);
    }

    /** Whether {@code bytes} (an address's, as {@link #literal} gives them) lie in the block. */
    public boolean contains(byte[] bytes) {
        if (bytes.length != network.length) {
            return false;
        }
        int full = prefix / 8;
        for (int i = 0; i < full; i++) {
            if (bytes[i] != network[i]) {
                return false;
            }
        }
        int rest = prefix % 8;
        if (rest == 0) {
            return true;
        }
        int mask = 0xff << (8 - rest) & 0xff;
        return (bytes[full] & mask) == (network[full] & mask);
    }
}
