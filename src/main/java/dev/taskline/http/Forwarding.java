package dev.taskline.http;

import dev.taskline.config.Cidr;
import dev.taskline.config.TasklineConfig;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.net.SocketAddress;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;

/**
 * Who a request comes from, and whether over TLS, through the proxies the node trusts
 * ({@code http.trustedProxies}). From a trusted proxy, the client is what the one header they use
 * ({@code http.forwardedHeader}: {@code X-Forwarded-For}, or {@code Forwarded} of RFC 7239) names:
 * the nearest address in the chain, all its lines read as one, that is not itself a trusted proxy;
 * and the request came over TLS when the nearest proxy says {@code https}. Anything before the
 * nearest untrusted hop was written by the client and is passed over. From any other peer those
 * headers are a client's own words and count for nothing. Nothing here is looked up: an address
 * is a literal or it is not one.
 */
final class Forwarding {

    /** The client's address (text), and whether the request reached the node over TLS. */
    record Client(String address, boolean secure) {}

    private final List<Cidr> trusted;
    private final boolean standard;

    Forwarding(TasklineConfig.Proxies proxies) {
        this.trusted = proxies.trusted();
        this.standard = proxies.standard();
    }

    Client client(HttpServerRequest request) {
        SocketAddress peer = request.remoteAddress();
        String peerAddress = peer == null || peer.hostAddress() == null ? "?" : peer.hostAddress();
        if (trusted.isEmpty() || !trusted(peerAddress)) {
            return new Client(peerAddress, request.isSSL());
        }
        List<String> chain = new ArrayList<>();
        String proto;
        if (standard) {
            String nearestProto = null;
            for (String element :
                    String.join(",", request.headers().getAll("Forwarded")).split(",")) {
                String forHop = null;
                String protoHere = null;
                for (String pair : element.split(";")) {
                    int eq = pair.indexOf('=');
                    if (eq < 0) {
                        continue;
                    }
                    String name = pair.substring(0, eq).trim().toLowerCase(Locale.ROOT);
                    String value = unquote(pair.substring(eq + 1).trim());
                    if (name.equals("for")) {
                        forHop = value;
                    } else if (name.equals("proto")) {
                        protoHere = value;
                    }
                }
                chain.add(forHop == null ? "" : forHop);
                nearestProto = protoHere; // the last element is the nearest proxy's, whatever came before
            }
            proto = nearestProto;
        } else {
            for (String hop : String.join(",", request.headers().getAll("X-Forwarded-For"))
                    .split(",")) {
                chain.add(hop.trim());
            }
            String[] protos = String.join(",", request.headers().getAll("X-Forwarded-Proto"))
                    .split(",");
            proto = protos[protos.length - 1].trim(); // the nearest proxy's
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
                || (proto != null && proto.toLowerCase(Locale.ROOT).equals("https"));
        return new Client(client, secure);
    }

    private boolean trusted(String address) {
        byte[] bytes = Cidr.literal(address);
        if (bytes == null) {
            return false;
        }
        for (Cidr block : trusted) {
            if (block.contains(bytes)) {
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
        return Cidr.literal(text) == null ? null : text;
    }
}
