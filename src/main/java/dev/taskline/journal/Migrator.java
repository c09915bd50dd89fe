package dev.taskline.journal;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.logging.Logger;

/**
 * Applies the forward-only migrations {@code sql/migrations/000001.sql}, {@code 000002.sql}, ... in
 * order, each in its own transaction, and records them. An advisory lock serialises nodes that
 * start at the same time against one database.
 */
public final class Migrator {

    private static final Logger LOG = Logger.getLogger(Migrator.class.getName());
    private static final long LOCK_KEY = 0x7461736b6c696e65L; // "taskline"

    private Migrator() {}

    /** Brings the schema up to date; the future holds how many migrations this call applied. */
    public static Future<Integer> migrate(Vertx vertx, Pool pool) {
        return vertx.executeBlocking(Migrator::readAll, false).compose(scripts -> applyFrom(pool, scripts, 0, 0));
    }

    private static Future<Integer> applyFrom(Pool pool, List<String> scripts, int index, int applied) {
        if (index == scripts.size()) {
            return Future.succeededFuture(applied);
        }
        int version = index + 1;
        String script = scripts.get(index);
        return pool.withTransaction(conn -> conn.preparedQuery("SELECT pg_advisory_xact_lock($1)")
                        .execute(Tuple.of(LOCK_KEY))
                        .compose(v -> conn.query("SELECT to_regclass('taskline_migrations') IS NOT NULL AS present")
                                .execute())
                        .compose(rows -> rows.iterator().next().getBoolean("present")
                                ? Future.succeededFuture()
                                : conn.query(
                                                "CREATE TABLE taskline_migrations ("
                                                        + "version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now())")
                                        .execute()
                                        .mapEmpty())
                        .compose(v -> conn.preparedQuery("SELECT 1 FROM taskline_migrations WHERE version = $1")
                                .execute(Tuple.of(version)))
                        .compose(rows -> {
                            if (rows.size() > 0) {
                                return Future.succeededFuture(false);
                            }
                            LOG.info("applying migration " + version);
                            // The client logs each server NOTICE as a warning; a migration's notices (an index
                            // renamed as it becomes a key, say) are planned, so only warnings and worse reach it.
                            return conn.query("SET LOCAL client_min_messages = warning")
                                    .execute()
                                    .compose(v -> conn.query(script).execute())
                                    .compose(v -> conn.preparedQuery(
                                                    "INSERT INTO taskline_migrations (version) VALUES ($1)")
                                            .execute(Tuple.of(version)))
                                    .map(true);
                        }))
                .compose(didApply -> applyFrom(pool, scripts, index + 1, applied + (didApply ? 1 : 0)));
    }

    private static List<String> readAll() {
        List<String> scripts = new ArrayList<>();
        for (int version = 1; ; version++) {
            String resource = String.format("/sql/migrations/%06d.sql", version);
            try (InputStream in = Migrator.class.getResourceAsStream(resource)) {
                if (in == null) {
                    return scripts;
                }
                scripts.add(new String(in.readAllBytes(), StandardCharsets.UTF_8));
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
    }
}
