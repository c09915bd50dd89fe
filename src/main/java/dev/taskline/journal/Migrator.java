package dev.taskline.journal;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Applies the forward-only migrations {@code sql/migrations/NNNNNN_what_it_does.sql} in the order
 * of their numbers (as {@code sql/migrations/index.txt} lists them), each in its own transaction,
 * and records them by number, so that a file's name may say what it does without changing what was
 * applied. An advisory lock serialises nodes that start at the same time against one database.
 */
public final class Migrator {

    private static final Logger LOG = Logger.getLogger(Migrator.class.getName());
    private static final long LOCK_KEY = 0x7461736b6c696e65L; // "taskline"
    private static final String FOLDER = "/sql/migrations";
    /** The migrations in the order they are applied, one file a line. */
    static final String INDEX = "index.txt";
    /** A migration's file: its six-digit number, then what it does. */
    static final Pattern FILE = Pattern.compile("(\\d{6})_[a-z0-9_]+\\.sql");

    private Migrator() {}

    /** Brings the schema up to date; the future holds how many migrations this call applied. */
    public static Future<Integer> migrate(Vertx vertx, Pool pool) {
        return migrate(vertx, pool, Integer.MAX_VALUE);
    }

    /** As {@link #migrate(Vertx, Pool)}, up to migration {@code last}: a journal as an earlier release left it. */
    public static Future<Integer> migrate(Vertx vertx, Pool pool, int last) {
        return vertx.executeBlocking(Migrator::readAll, false)
                .compose(scripts -> applyFrom(
                        vertx, pool, Sql.queries(), scripts.subList(0, Math.min(last, scripts.size())), 0, 0));
    }

    /**
     * A migration that takes an exclusive lock on a table other nodes write (000028, 000030) waits
     * half a second at most for it (lock_timeout), as waiting longer would queue every statement on
     * the table behind it; it is tried again, this many times, a little later each time.
     */
    static final int LOCK_TRIES = 60;

    private static Future<Integer> applyFrom(
            Vertx vertx, Pool pool, Sql sql, List<String> scripts, int index, int applied) {
        if (index == scripts.size()) {
            return Future.succeededFuture(applied);
        }
        return applyTrying(vertx, pool, sql, scripts, index, 0)
                .compose(didApply -> applyFrom(vertx, pool, sql, scripts, index + 1, applied + didApply));
    }

    /** As {@link #apply}, tried again while its lock is not had in time, {@link #LOCK_TRIES} times at most. */
    private static Future<Integer> applyTrying(
            Vertx vertx, Pool pool, Sql sql, List<String> scripts, int index, int tries) {
        return apply(pool, sql, scripts, index).recover(e -> {
            if (!lockNotHad(e) || tries + 1 >= LOCK_TRIES) {
                return Future.failedFuture(e);
            }
            LOG.info("migration " + (index + 1) + " did not have its lock within its timeout; trying again");
            return vertx.timer(100L * Math.min(tries + 1, 10))
                    .compose(v -> applyTrying(vertx, pool, sql, scripts, index, tries + 1));
        });
    }

    /**
     * SQLSTATE 55P03, a lock not had within lock_timeout; or 40P01, the migration ended by a deadlock
     * check (a writer held one table it locks and wanted another): nothing of it committed.
     */
    private static boolean lockNotHad(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof io.vertx.pgclient.PgException pg
                    && ("55P03".equals(pg.getSqlState()) || "40P01".equals(pg.getSqlState()))) {
                return true;
            }
        }
        return false;
    }

    /** Applies migration {@code index + 1} unless it was; 1 when this call applied it, else 0. */
    private static Future<Integer> apply(Pool pool, Sql sql, List<String> scripts, int index) {
        int version = index + 1;
        String script = scripts.get(index);
        Sql.Statement lock = sql.statement("migrations_lock");
        Sql.Statement isApplied = sql.statement("migration_applied");
        Sql.Statement record = sql.statement("migration_record");
        return pool.withTransaction(conn -> conn.query(sql.get("migration_unbounded"))
                        .execute()
                        .compose(v -> conn.preparedQuery(lock.text()).execute(lock.bind("key", LOCK_KEY)))
                        .compose(v ->
                                conn.query(sql.get("migrations_table_present")).execute())
                        .compose(rows -> rows.iterator().next().getBoolean("present")
                                ? Future.succeededFuture()
                                : conn.query(sql.get("migrations_table_create"))
                                        .execute()
                                        .mapEmpty())
                        .compose(v -> conn.preparedQuery(isApplied.text()).execute(isApplied.bind("version", version)))
                        .compose(rows -> {
                            if (rows.size() > 0) {
                                return Future.succeededFuture(false);
                            }
                            LOG.info("applying migration " + version);
                            return conn.query(sql.get("migration_notices_quiet"))
                                    .execute()
                                    .compose(v -> conn.query(script).execute())
                                    .compose(v ->
                                            conn.preparedQuery(record.text()).execute(record.bind("version", version)))
                                    .map(true);
                        }))
                .map(didApply -> didApply ? 1 : 0);
    }

    /**
     * The migrations' texts, the first at index 0, as {@code sql/migrations/index.txt} lists them;
     * blocking (it reads resources). Read through the class loader, one file by name at a time, so
     * that it works however the node is packaged, and a file the index does not name is not read.
     */
    static List<String> readAll() {
        return readAll(name -> {
            try (InputStream in = Migrator.class.getResourceAsStream(FOLDER + "/" + name)) {
                if (in == null) {
                    throw new IllegalStateException("no " + FOLDER + "/" + name + " on the class path");
                }
                return new String(in.readAllBytes(), StandardCharsets.UTF_8);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        });
    }

    /** As {@link #readAll()}, each file (the index included) read by {@code read} from its name. */
    static List<String> readAll(Function<String, String> read) {
        List<String> names = names(read.apply(INDEX));
        List<String> scripts = new ArrayList<>(names.size());
        for (String name : names) {
            scripts.add(read.apply(name));
        }
        return scripts;
    }

    /**
     * The files an index names, in its order: each a migration's name, numbered 1, 2, 3 ... in turn.
     * Blank lines and lines of {@code #} are left out.
     */
    static List<String> names(String index) {
        List<String> names = new ArrayList<>();
        for (String line : index.split("\n")) {
            String name = line.trim();
            if (name.isEmpty() || name.startsWith("#")) {
                continue;
            }
            Matcher m = FILE.matcher(name);
            if (!m.matches()) {
                throw new IllegalStateException(FOLDER + "/" + INDEX + " names " + name
                        + ", which is not a migration's name (six digits, then _what_it_does.sql)");
            }
            if (Integer.parseInt(m.group(1)) != names.size() + 1) {
                throw new IllegalStateException(FOLDER + "/" + INDEX + " names " + name + " where migration "
                        + (names.size() + 1) + " is due: migrations are numbered 1, 2, 3 ... in the order applied");
            }
            names.add(name);
        }
        return names;
    }
}
