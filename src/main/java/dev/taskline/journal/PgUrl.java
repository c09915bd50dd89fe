package dev.taskline.journal;

import io.vertx.core.net.ClientSSLOptions;
import io.vertx.core.net.PemTrustOptions;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.SslMode;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Locale;
import java.util.Map;

/**
 * Reads a PostgreSQL URL as libpq does, for the parts a node uses: {@code
 * postgresql://user:pass@host1:5432,host2:5433/db?target_session_attrs=read-write&sslmode=verify-full&sslrootcert=/path/root.crt}.
 * A parameter libpq knows but this does not is refused by name rather than ignored: a node told
 * {@code sslmode=verify-full} must not quietly connect in the clear.
 */
public final class PgUrl {

    /** The query parameters read; any other is refused. */
    static final List<String> KNOWN = List.of(
            "target_session_attrs",
            "sslmode",
            "sslrootcert",
            "connect_timeout",
            "application_name",
            "user",
            "password",
            "dbname");

    private PgUrl() {}

    /** The first server's connect options: for a URL of one host, and for tests. */
    public static PgConnectOptions parse(String url) {
        return target(url).servers().get(0);
    }

    /** Every server the URL names, in its order, and what a session must be on one to be taken. */
    public static PgTarget target(String url) {
        if (url == null || !url.matches("^postgres(ql)?://.*")) {
            throw new IllegalArgumentException("not a PostgreSQL URL (postgresql://user:pass@host:port/db)");
        }
        String rest = url.substring(url.indexOf("://") + 3);
        String query = null;
        int q = rest.indexOf('?');
        if (q >= 0) {
            query = rest.substring(q + 1);
            rest = rest.substring(0, q);
        }
        int slash = rest.indexOf('/');
        String authority = slash < 0 ? rest : rest.substring(0, slash);
        String database = slash < 0 || slash == rest.length() - 1 ? null : decode(rest.substring(slash + 1));
        String user = null;
        String password = null;
        int at = authority.lastIndexOf('@');
        if (at >= 0) {
            String userInfo = authority.substring(0, at);
            authority = authority.substring(at + 1);
            int colon = userInfo.indexOf(':');
            user = decode(colon < 0 ? userInfo : userInfo.substring(0, colon));
            password = colon < 0 ? null : decode(userInfo.substring(colon + 1));
        }
        Map<String, String> params = params(query);
        user = params.getOrDefault("user", user);
        password = params.getOrDefault("password", password);
        database = params.getOrDefault("dbname", database);
        List<String[]> hosts = hosts(authority);
        PgTarget.Session session = PgTarget.Session.of(params.get("target_session_attrs"));
        List<PgConnectOptions> servers = new ArrayList<>();
        for (String[] host : hosts) {
            PgConnectOptions options = new PgConnectOptions()
                    .setHost(host[0])
                    .setPort(port(host[1]))
                    // The client's defaults but extra_float_digits, which PgBouncer refuses unless told
                    // to ignore it ("unsupported startup parameter"); since PostgreSQL 12 its default
                    // already writes floats exactly.
                    .setProperties(new HashMap<>(
                            Map.of("DateStyle", "ISO", "client_encoding", "utf8", "application_name", "taskline")));
            if (database != null) {
                options.setDatabase(database);
            }
            if (user != null) {
                options.setUser(user);
            }
            if (password != null) {
                options.setPassword(password);
            }
            if (params.containsKey("application_name")) {
                options.addProperty("application_name", params.get("application_name"));
            }
            tls(options, params.get("sslmode"), params.get("sslrootcert"));
            servers.add(options);
        }
        return new PgTarget(servers, session, connectTimeoutMs(params.get("connect_timeout")));
    }

    private static Map<String, String> params(String query) {
        Map<String, String> params = new LinkedHashMap<>();
        if (query == null || query.isEmpty()) {
            return params;
        }
        for (String pair : query.split("&")) {
            if (pair.isEmpty()) {
                continue;
            }
            int eq = pair.indexOf('=');
            String name = decode(eq < 0 ? pair : pair.substring(0, eq));
            String value = eq < 0 ? "" : decode(pair.substring(eq + 1));
            if (!KNOWN.contains(name)) {
                throw new IllegalArgumentException("the PostgreSQL URL's parameter '" + name
                        + "' is not one Taskline reads (it reads " + String.join(", ", KNOWN) + ")");
            }
            params.put(name, value);
        }
        return params;
    }

    /** {@code host:port} pairs, comma-separated; an IPv6 address in brackets. */
    private static List<String[]> hosts(String authority) {
        List<String[]> hosts = new ArrayList<>();
        for (String part : authority.split(",", -1)) {
            String host;
            String port = null;
            if (part.startsWith("[")) {
                int close = part.indexOf(']');
                if (close < 0) {
                    throw new IllegalArgumentException("PostgreSQL URL has an unclosed IPv6 address: " + part);
                }
                host = part.substring(1, close);
                if (part.length() > close + 1) {
                    if (part.charAt(close + 1) != ':') {
                        throw new IllegalArgumentException("PostgreSQL URL has a bad host: " + part);
                    }
                    port = part.substring(close + 2);
                }
            } else {
                int colon = part.lastIndexOf(':');
                host = colon < 0 ? part : part.substring(0, colon);
                port = colon < 0 ? null : part.substring(colon + 1);
            }
            if (host.isEmpty()) {
                throw new IllegalArgumentException("PostgreSQL URL has no host");
            }
            hosts.add(new String[] {decode(host), port});
        }
        if (hosts.size() > PgTarget.MOST_SERVERS) {
            throw new IllegalArgumentException(
                    "PostgreSQL URL names " + hosts.size() + " hosts; at most " + PgTarget.MOST_SERVERS);
        }
        return hosts;
    }

    private static int port(String port) {
        if (port == null || port.isEmpty()) {
            return 5432;
        }
        try {
            int value = Integer.parseInt(port);
            if (value < 1 || value > 65535) {
                throw new NumberFormatException();
            }
            return value;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("PostgreSQL URL has a bad port: " + port);
        }
    }

    private static int connectTimeoutMs(String seconds) {
        if (seconds == null || seconds.isEmpty()) {
            return PgTarget.DEFAULT_CONNECT_TIMEOUT_MS;
        }
        try {
            int value = Integer.parseInt(seconds);
            // libpq: zero (or less) waits for ever; a node waits no more than a minute for a server.
            return value <= 0 ? 60_000 : Math.max(2, Math.min(value, 60)) * 1000;
        } catch (NumberFormatException e) {
            throw new IllegalArgumentException("connect_timeout must be a number of seconds: " + seconds);
        }
    }

    /**
     * libpq's sslmode, as the client can do it: {@code disable} and {@code allow} connect in the clear
     * (allow tries the clear first), {@code prefer} tries TLS first, {@code require} encrypts without
     * checking the server's certificate (as libpq does when no root certificate is given), {@code
     * verify-ca} checks it against {@code sslrootcert}, {@code verify-full} also checks the host name.
     */
    private static void tls(PgConnectOptions options, String sslmode, String rootCert) {
        if (sslmode == null && rootCert == null) {
            return;
        }
        SslMode mode;
        switch (sslmode == null ? "verify-ca" : sslmode.toLowerCase(Locale.ROOT)) {
            case "disable" -> mode = SslMode.DISABLE;
            case "allow" -> mode = SslMode.ALLOW;
            case "prefer" -> mode = SslMode.PREFER;
            case "require" -> mode = SslMode.REQUIRE;
            case "verify-ca" -> mode = SslMode.VERIFY_CA;
            case "verify-full" -> mode = SslMode.VERIFY_FULL;
            default ->
                throw new IllegalArgumentException("sslmode must be one of disable, allow, prefer, require,"
                        + " verify-ca, verify-full; not " + sslmode);
        }
        options.setSslMode(mode);
        if (mode == SslMode.DISABLE) {
            return;
        }
        ClientSSLOptions ssl = new ClientSSLOptions();
        boolean verify = mode == SslMode.VERIFY_CA || mode == SslMode.VERIFY_FULL;
        if (rootCert != null && !rootCert.isEmpty()) {
            ssl.setTrustOptions(new PemTrustOptions().addCertPath(rootCert));
        } else if (verify) {
            throw new IllegalArgumentException("sslmode=" + sslmode + " needs sslrootcert: the root certificate"
                    + " the server's is checked against (a path to a PEM file)");
        } else {
            ssl.setTrustAll(true);
        }
        // verify-ca checks the chain only; verify-full the server's name too.
        ssl.setHostnameVerificationAlgorithm(mode == SslMode.VERIFY_FULL ? "HTTPS" : "");
        options.setSslOptions(ssl);
    }

    private static String decode(String part) {
        return URLDecoder.decode(part, StandardCharsets.UTF_8);
    }
}
