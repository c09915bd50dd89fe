package dev.taskline.testing;

import dev.taskline.journal.EmbeddedPostgresServer;
import dev.taskline.journal.Migrator;
import dev.taskline.journal.PgUrl;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/**
 * One PostgreSQL per test JVM: the embedded one the server uses by default, or the server named by
 * {@code TASKLINE_TEST_PG_URL}. Each test class gets a fresh database of its own, so classes never
 * see each other's rows and the schema is the one the server's migrations build.
 */
public final class TestPostgres {

    public static final String ENV_URL = "TASKLINE_TEST_PG_URL";

    private static String adminUrl;
    /** The URL tests connect with, but for its database; the admin's, for an external server. */
    private static String appUrl;
    /** The role that owns the databases made here; null: the admin's own. */
    private static String owner;

    private TestPostgres() {}

    private static synchronized String adminUrl() throws Exception {
        if (adminUrl == null) {
            String external = System.getenv(ENV_URL);
            if (external != null && !external.isBlank()) {
                adminUrl = external.trim();
                appUrl = adminUrl;
            } else {
                Path dir = Files.createTempDirectory("taskline-test-pg");
                EmbeddedPostgresServer server = EmbeddedPostgresServer.start(dir, false);
                Runtime.getRuntime().addShutdownHook(new Thread(() -> {
                    try {
                        server.close();
                        // About a gigabyte a run (every test class's database): left behind, repeated runs fill the
                        // disk.
                        deleteTree(dir);
                    } catch (Exception ignored) {
                        // the JVM is going away; PostgreSQL's own shutdown is best effort here
                    }
                }));
                // Databases are made as the superuser, for the node's role, which the tests connect as: the
                // journal's migrations and statements run with no more rights than a node has.
                adminUrl = server.adminUrl();
                appUrl = server.url();
                owner = server.role();
            }
        }
        return adminUrl;
    }

    static void deleteTree(Path dir) throws java.io.IOException {
        try (java.util.stream.Stream<Path> paths = Files.walk(dir)) {
            for (Path path : paths.sorted(java.util.Comparator.reverseOrder()).toList()) {
                Files.deleteIfExists(path);
            }
        }
    }

    /** Drops a database made by {@link #newDatabase}, ending its sessions: the journal vanishes. */
    public static void dropDatabase(String url) throws Exception {
        String name = PgUrl.parse(url).getDatabase();
        adminQuery("DROP DATABASE " + name + " WITH (FORCE)");
    }

    /**
     * Ends every session on the database of {@code url} but the one asking, as an operator's
     * {@code pg_terminate_backend} would: the node's pooled connections break under it.
     */
    public static void terminateSessions(String url) throws Exception {
        String name = PgUrl.parse(url).getDatabase();
        adminQuery("SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE datname = '" + name
                + "' AND pid <> pg_backend_pid()");
    }

    /** Sets the CONNECTION LIMIT of the database of {@code url}, as an operator's budget would. */
    public static void connectionLimit(String url, int most) throws Exception {
        adminQuery("ALTER DATABASE " + PgUrl.parse(url).getDatabase() + " CONNECTION LIMIT " + most);
    }

    private static void adminQuery(String sql) throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            Pool pool = PgBuilder.pool()
                    .with(new PoolOptions().setMaxSize(1))
                    .connectingTo(PgUrl.parse(adminUrl()))
                    .using(vertx)
                    .build();
            pool.query(sql)
                    .execute()
                    .eventually(pool::close)
                    .toCompletionStage()
                    .toCompletableFuture()
                    .get(60, TimeUnit.SECONDS);
        } finally {
            vertx.close().toCompletionStage().toCompletableFuture().get(30, TimeUnit.SECONDS);
        }
    }

    /** A pool of four on a new database with the journal's schema, for tests of journal statements. */
    public static Pool journalPool(Vertx vertx) throws Exception {
        Pool pool = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(4))
                .connectingTo(PgUrl.parse(newDatabase()))
                .using(vertx)
                .build();
        Migrator.migrate(vertx, pool).toCompletionStage().toCompletableFuture().get(60, TimeUnit.SECONDS);
        return pool;
    }

    /** Creates an empty database and returns its URL. */
    public static String newDatabase() throws Exception {
        adminUrl();
        String name = "t_" + UUID.randomUUID().toString().replace("-", "").substring(0, 16);
        adminQuery("CREATE DATABASE " + name + (owner == null ? "" : " OWNER " + owner));
        int slash = appUrl.lastIndexOf('/');
        int query = appUrl.indexOf('?', slash);
        return appUrl.substring(0, slash + 1) + name + (query < 0 ? "" : appUrl.substring(query));
    }
}
