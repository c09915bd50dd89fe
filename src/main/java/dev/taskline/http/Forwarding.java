package dev.taskline.http;

import dev.taskline.config.Cidr;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.SocketAddress;
import java.net.InetAddress;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Who a request comes from, and whether over TLS, through the proxies the node trusts
 * ({@code http.trustedProxies}). From a trusted proxy, the client is what its {@code Forwarded}
 * header (RFC 7239) or else {@code X-Forwarded-For} names: the nearest address in the chain that is
 * not itself a trusted proxy; and the request came over TLS when the proxy says {@code https}. From
 * any other peer those headers are a client's own words and count for nothing.
 */
final class Forwarding {

    /** The client's address (text), and whether the request reached the node over TLS. */
    record Client(String address, boolean secure) {}

    private final List<Cidr> trusted;

    Forwarding(List<Cidr> trusted) {
        this.trusted = List.copyOf(trusted);
    }

    Client client(HttpServerRequest request) {
        SocketAddress peer = request.remoteAddress();
        String peerAddress = peer == null || peer.hostAddress() == null ? "?" : peer.hostAddress();
        if (trusted.isEmpty() || !trusted(peerAddress)) {
            return new Client(peerAddress, request.isSSL());
        }
        List<String> chain = new ArrayList<>();
        String proto = null;
        String forwarded = request.getHeader("Forwarded");
        if (forwarded != null) {
            for (String element : forwarded.split(",")) {
                for (String pair : element.split(";")) {
                    int eq = pair.indexOf('=');
                    if (eq < 0) {
                        continue;
                    }
                    String name = pair.substring(0, eq).trim().toLowerCase(Locale.ROOT);
                    String value = unquote(pair.substring(eq + 1).trim());
                    if (name.equals("for")) {
                        chain.add(value);
                    } else if (name.equals("proto")) {
                        proto = value; // the nearest proxy's word is the last
                    }
                }
            }
        } else {
            String xff = request.getHeader("X-Forwarded-For");
            if (xff != null) {
                for (String hop : xff.split(",")) {
                    chain.add(hop.trim());
                }
            }
            proto = request.getHeader("X-Forwarded-Proto");
        }
        // From the nearest hop back, past the trusted proxies: the first other address is the client.
        String client = peerAddress;
        for (int i = chain.size() - 1; i >= 0; i--) {
            String address = address(chain.get(i));
            if (address == null) {
                break; // "unknown", an obfuscated name, garbage: go no further than the last address known
            }
            client = address;
            if (!trusted(address)) {
                break;
            }
        }
        boolean secure = request.isSSL()
                || (proto != null && proto.trim().toLowerCase(Locale.ROOT).startsWith("https"));
        return new Client(client, secure);
    }

    private boolean trusted(String address) {
        InetAddress parsed = literal(address);
        if (parsed == null) {
            return false;
        }
        for (Cidr block : trusted) {
            if (block.contains(parsed)) {
                return true;
            }
        }
        return false;
    }

    private static String unquote(String value) {
        return value.length() >= 2 && value.startsWith("\"") && value.endsWith("\"")
                ? value.substring(1, value.length() - 1)
                : value;
    }

    /** The address a hop names, without its port: {@code 192.0.2.1:47}, {@code [2001:db8::1]:47}; null when none. */
    private static String address(String hop) {
        String text = hop.trim();
        if (text.startsWith("[")) {
            int close = text.indexOf(']');
            text = close < 0 ? "" : text.substring(1, close);
        } else if (text.indexOf(':') == text.lastIndexOf(':') && text.indexOf(':') > 0) {
            text = text.substring(0, text.indexOf(':')); // IPv4 with a port
        }
        return literal(text) == null ? null : text;
    }

    /** {@code text} as an address, when it is an address literal (never a name: nothing is looked up). */
    private static InetAddress literal(String text) {
        if (text.isEmpty() || !text.matches("[0-9a-fA-F:.]+") || !(text.contains(".") || text.contains(":"))) {
            return null;
        }
        try {
            return InetAddress.getByName(text);
        } catch (UnknownHostException e) {
            return null;
        }
    }
}
