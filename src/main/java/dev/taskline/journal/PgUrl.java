package dev.taskline.journal;

import io.vertx.pgclient.PgConnectOptions;
import java.net.URI;
import java.net.URLDecoder;
import java.nio.charset.StandardCharsets;

/** Turns {@code postgresql://user:pass@host:port/db} into connect options. */
public final class PgUrl {

    private PgUrl() {}

    public static PgConnectOptions parse(String url) {
        URI uri;
        try {
            uri = URI.create(url.replaceFirst("^postgres(ql)?://", "postgresql://"));
        } catch (IllegalArgumentException e) {
            throw new IllegalArgumentException("not a PostgreSQL URL (postgresql://user:pass@host:port/db)");
        }
        if (uri.getHost() == null) {
            throw new IllegalArgumentException("PostgreSQL URL has no host");
        }
        PgConnectOptions options =
                new PgConnectOptions().setHost(uri.getHost()).setPort(uri.getPort() == -1 ? 5432 : uri.getPort());
        String path = uri.getRawPath();
        if (path != null && path.length() > 1) {
            options.setDatabase(decode(path.substring(1)));
        }
        String userInfo = uri.getRawUserInfo();
        if (userInfo != null) {
            int colon = userInfo.indexOf(':');
            options.setUser(decode(colon < 0 ? userInfo : userInfo.substring(0, colon)));
            if (colon >= 0) {
                options.setPassword(decode(userInfo.substring(colon + 1)));
            }
        }
        return options;
    }

    private static String decode(String part) {
        return URLDecoder.decode(part, StandardCharsets.UTF_8);
    }
}
