package dev.taskline.journal;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.URL;
import java.nio.charset.StandardCharsets;
import java.nio.file.FileSystem;
import java.nio.file.FileSystemAlreadyExistsException;
import java.nio.file.FileSystems;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.logging.Logger;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * Applies the forward-only migrations {@code sql/migrations/NNNNNN_what_it_does.sql} in the order
 * of their numbers, each in its own transaction, and records them by number (so that a file's name
 * may say what it does without changing what was applied). An advisory lock serialises nodes that
 * start at the same time against one database.
 */
public final class Migrator {

    private static final Logger LOG = Logger.getLogger(Migrator.class.getName());
    private static final long LOCK_KEY = 0x7461736b6c696e65L; // "taskline"
    private static final String FOLDER = "/sql/migrations";
    /** A migration's file: its six-digit number, then what it does. */
    static final Pattern FILE = Pattern.compile("(\\d{6})(?:_[a-z0-9_]+)?\\.sql");

    private Migrator() {}

    /** Brings the schema up to date; the future holds how many migrations this call applied. */
    public static Future<Integer> migrate(Vertx vertx, Pool pool) {
        return vertx.executeBlocking(Migrator::readAll, false)
                .compose(scripts -> applyFrom(pool, Sql.queries(), scripts, 0, 0));
    }

    private static Future<Integer> applyFrom(Pool pool, Sql sql, List<String> scripts, int index, int applied) {
        if (index == scripts.size()) {
            return Future.succeededFuture(applied);
        }
        int version = index + 1;
        String script = scripts.get(index);
        Sql.Statement lock = sql.statement("migrations_lock");
        Sql.Statement isApplied = sql.statement("migration_applied");
        Sql.Statement record = sql.statement("migration_record");
        return pool.withTransaction(conn -> conn.preparedQuery(lock.text())
                        .execute(lock.bind("key", LOCK_KEY))
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
                .compose(didApply -> applyFrom(pool, sql, scripts, index + 1, applied + (didApply ? 1 : 0)));
    }

    /** The migrations' texts, the first at index 0; blocking (it reads files, in the jar or not). */
    static List<String> readAll() {
        URL folder = Migrator.class.getResource(FOLDER);
        if (folder == null) {
            throw new IllegalStateException("no " + FOLDER + " on the class path");
        }
        return readAll(folder);
    }

    /** As {@link #readAll()}, from {@code folder}: a directory, or {@code sql/migrations} in a jar. */
    static List<String> readAll(URL folder) {
        try {
            URI uri = folder.toURI();
            if (!"jar".equals(uri.getScheme())) {
                return read(Path.of(uri));
            }
            FileSystem jar;
            boolean opened = false;
            try {
                jar = FileSystems.newFileSystem(uri, Map.of());
                opened = true;
            } catch (FileSystemAlreadyExistsException e) {
                jar = FileSystems.getFileSystem(uri);
            }
            try {
                return read(jar.getPath(FOLDER));
            } finally {
                if (opened) {
                    jar.close();
                }
            }
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        } catch (URISyntaxException e) {
            throw new IllegalStateException(e);
        }
    }

    /** Every migration of {@code folder} in order; their numbers must run 1, 2, 3 ... with none twice. */
    static List<String> read(Path folder) throws IOException {
        TreeMap<Integer, Path> byNumber = new TreeMap<>();
        try (Stream<Path> files = Files.list(folder)) {
            for (Path file : (Iterable<Path>) files::iterator) {
                String name = file.getFileName().toString();
                Matcher m = FILE.matcher(name);
                if (!m.matches()) {
                    throw new IllegalStateException("sql/migrations/" + name
                            + " is not a migration's name (six digits, then _what_it_does.sql)");
                }
                Path twin = byNumber.put(Integer.parseInt(m.group(1)), file);
                if (twin != null) {
                    throw new IllegalStateException(
                            "two migrations numbered " + m.group(1) + ": " + name + " and " + twin.getFileName());
                }
            }
        }
        List<String> scripts = new ArrayList<>(byNumber.size());
        for (Map.Entry<Integer, Path> migration : byNumber.entrySet()) {
            if (migration.getKey() != scripts.size() + 1) {
                throw new IllegalStateException("no migration numbered " + (scripts.size() + 1) + " before "
                        + migration.getValue().getFileName());
            }
            scripts.add(Files.readString(migration.getValue(), StandardCharsets.UTF_8));
        }
        return scripts;
    }
}
