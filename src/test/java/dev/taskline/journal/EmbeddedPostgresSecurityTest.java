package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.ByteArrayOutputStream;
import java.io.DataInputStream;
import java.io.DataOutputStream;
import java.io.IOException;
import java.net.Socket;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermissions;
import java.sql.Connection;
import java.sql.Statement;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.concurrent.ExecutionException;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The embedded PostgreSQL takes only its owner: a connection without the password is refused, the
 * node's role is no superuser (no {@code COPY ... TO PROGRAM}, no files, no new roles), there is no
 * Unix socket, and the passwords and the data are the node's user's alone. A cluster from before
 * (which trusted every local connection) gets passwords at its next start and its journal is handed
 * to the node's role.
 */
class EmbeddedPostgresSecurityTest {

    /** AuthenticationSASL: the server asks for a password (scram-sha-256); AuthenticationOk would be 0. */
    private static final int SASL = 10;

    private static Vertx vertx;
    private final List<Path> dirs = new ArrayList<>();

    @BeforeAll
    static void start() {
        vertx = Vertx.vertx();
    }

    @AfterAll
    static void stop() throws Exception {
        await(vertx.close());
    }

    @Test
    void a_new_cluster_takes_only_its_owner_and_its_role_is_no_superuser() throws Exception {
        Path dir = newDir();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x")); // as a umask makes it
        EmbeddedPostgresServer server = EmbeddedPostgresServer.start(dir, false);
        try {
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
            assertEquals(
                    "rwx------",
                    PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("postgres-binaries"))));
            assertEquals(
                    "rw-------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir.resolve("pgpass"))));

            for (String role : List.of("postgres", "taskline")) {
                assertEquals(
                        SASL, authenticationAsked(server.port(), role), role + " without a password is asked for one");
                assertEquals(
                        "28P01",
                        refusal(PgUrl.parse(server.url()).setUser(role).setPassword("guess")),
                        role + " with a wrong one");
            }

            assertEquals(false, first(server.url(), "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"));
            assertEquals("", first(server.adminUrl(), "SHOW unix_socket_directories"), "no Unix socket");
            assertEquals("taskline", first(server.url(), "SELECT current_user"));
            for (String attempt : List.of(
                    "COPY (SELECT 1) TO PROGRAM 'true'",
                    "SELECT pg_read_file('postgresql.conf')",
                    "CREATE ROLE intruder LOGIN SUPERUSER",
                    "ALTER ROLE taskline SUPERUSER",
                    "SELECT rolpassword FROM pg_authid")) {
                assertEquals("42501", failure(server.url(), attempt), attempt);
            }
            assertEquals(true, first(server.adminUrl(), "SELECT rolsuper FROM pg_roles WHERE rolname = current_user"));

            String url = server.url();
            server.close();
            server = EmbeddedPostgresServer.start(dir, false);
            assertEquals(url.replaceAll("@localhost:\\d+", ""), server.url().replaceAll("@localhost:\\d+", ""));
            assertEquals("taskline", first(server.url(), "SELECT current_user"), "the same passwords after a restart");
        } finally {
            server.close();
        }
    }

    @Test
    void a_cluster_that_trusted_every_local_connection_gets_passwords_and_hands_its_journal_over() throws Exception {
        Path dir = newDir();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxr-xr-x"));
        Path pgData = dir.resolve("pg");
        // What a node made before: initdb's trust for all, its journal migrated as the superuser.
        try (EmbeddedPostgres legacy = EmbeddedPostgres.builder()
                .setDataDirectory(pgData)
                .setCleanDataDirectory(false)
                .setOverrideWorkingDirectory(dir.resolve("postgres-binaries").toFile())
                .setRegisterShutdownHook(false)
                .start()) {
            String trusted = "postgresql://postgres@localhost:" + legacy.getPort() + "/postgres";
            Pool pool = pool(PgUrl.parse(trusted));
            try {
                await(Migrator.migrate(vertx, pool));
            } finally {
                await(pool.close());
            }
            try (Connection c = legacy.getPostgresDatabase().getConnection();
                    Statement s = c.createStatement()) {
                // As it stood before this version's migration, which the node's role must then apply.
                s.execute("DROP TABLE session_revocations");
                s.execute("DELETE FROM taskline_migrations WHERE version = 16");
                s.execute("CREATE TABLE probe (id bigserial PRIMARY KEY, note text)");
                s.execute("INSERT INTO probe (note) VALUES ('kept')");
            }
        }

        EmbeddedPostgresServer server = EmbeddedPostgresServer.start(dir, false);
        try {
            assertEquals("rwx------", PosixFilePermissions.toString(Files.getPosixFilePermissions(dir)));
            assertEquals(SASL, authenticationAsked(server.port(), "postgres"), "no trust is left");
            assertEquals("kept", first(server.url(), "SELECT note FROM probe"));
            assertEquals(
                    0L,
                    first(
                            server.url(),
                            "SELECT count(*) FROM pg_class WHERE relnamespace = 'public'::regnamespace"
                                    + " AND relkind IN ('r', 'S', 'v', 'm', 'p') AND relowner <> 'taskline'::regrole"),
                    "every table and sequence of the journal is the node's role's");
            assertEquals(
                    2L,
                    first(
                            server.url(),
                            "WITH i AS (INSERT INTO probe (note) VALUES ('new') RETURNING id) SELECT id FROM i"));
            Pool pool = pool(PgUrl.parse(server.url()));
            try {
                assertEquals(1, await(Migrator.migrate(vertx, pool)), "the migrations go on as the node's role");
            } finally {
                await(pool.close());
            }
            assertEquals(
                    "taskline",
                    first(server.url(), "SELECT tableowner FROM pg_tables WHERE tablename = 'session_revocations'"));
        } finally {
            server.close();
        }
    }

    @Test
    void passwords_that_others_may_read_are_refused_before_anything_starts() throws Exception {
        Path dir = newDir();
        Path pgpass = dir.resolve("pgpass");
        Files.writeString(pgpass, "*:*:*:postgres:x\n");
        Files.setPosixFilePermissions(pgpass, PosixFilePermissions.fromString("rw-r--r--"));
        IOException refused = assertThrows(IOException.class, () -> EmbeddedPostgresServer.start(dir, false));
        assertTrue(refused.getMessage().contains("chmod 600"), refused.getMessage());
        assertFalse(Files.exists(dir.resolve("pg")), "no cluster was made");
    }

    @Test
    void a_data_directory_others_may_write_to_is_refused() throws Exception {
        Path dir = newDir();
        Files.setPosixFilePermissions(dir, PosixFilePermissions.fromString("rwxrwxrwx"));
        IOException refused = assertThrows(IOException.class, () -> EmbeddedPostgresServer.start(dir, false));
        assertTrue(refused.getMessage().contains("others may write to it"), refused.getMessage());
        assertFalse(Files.exists(dir.resolve("pg")), "no cluster was made");
    }

    @Test
    void passwords_are_saved_whole_and_read_back() throws Exception {
        Path dir = newDir();
        EmbeddedPasswords made = EmbeddedPasswords.generate(new java.security.SecureRandom());
        made.save(dir);
        assertEquals(made, EmbeddedPasswords.load(dir));
        assertNotEquals(made.superuser(), made.app());
        assertFalse(made.toString().contains(made.app()), "no password in a log line");
        assertFalse(Files.exists(dir.resolve("pgpass.new")));
    }

    private Path newDir() throws IOException {
        Path dir = Files.createTempDirectory("taskline-embedded-security");
        dirs.add(dir);
        return dir;
    }

    @org.junit.jupiter.api.AfterEach
    void deleteDirs() throws IOException {
        for (Path dir : dirs) {
            try (Stream<Path> paths = Files.walk(dir)) {
                for (Path path : paths.sorted(Comparator.reverseOrder()).toList()) {
                    Files.deleteIfExists(path);
                }
            }
        }
    }

    private static Pool pool(PgConnectOptions options) {
        return PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(1))
                .connectingTo(options)
                .using(vertx)
                .build();
    }

    private static Object first(String url, String sql) throws Exception {
        Pool pool = pool(PgUrl.parse(url));
        try {
            Row row = await(pool.query(sql).execute()).iterator().next();
            return row.getValue(0);
        } finally {
            await(pool.close());
        }
    }

    /** The SQLSTATE {@code sql} fails with. */
    private static String failure(String url, String sql) throws Exception {
        Pool pool = pool(PgUrl.parse(url));
        try {
            await(pool.query(sql).execute());
            throw new AssertionError(sql + " succeeded");
        } catch (ExecutionException e) {
            return ((PgException) e.getCause()).getSqlState();
        } finally {
            await(pool.close());
        }
    }

    /**
     * What the server answers a client that starts up as {@code role} and sends no password, in the
     * protocol's own terms (a client library would stop itself before the server could let it in).
     */
    private static int authenticationAsked(int port, String role) throws IOException {
        try (Socket socket = new Socket("localhost", port)) {
            socket.setSoTimeout(10_000);
            ByteArrayOutputStream body = new ByteArrayOutputStream();
            DataOutputStream out = new DataOutputStream(body);
            out.writeInt(196608); // protocol 3.0
            for (String text : List.of("user", role, "database", "postgres")) {
                out.write(text.getBytes(StandardCharsets.UTF_8));
                out.write(0);
            }
            out.write(0);
            DataOutputStream wire = new DataOutputStream(socket.getOutputStream());
            wire.writeInt(body.size() + 4);
            wire.write(body.toByteArray());
            wire.flush();
            DataInputStream in = new DataInputStream(socket.getInputStream());
            assertEquals('R', in.readByte(), "an authentication request");
            in.readInt(); // its length
            return in.readInt();
        }
    }

    /** The SQLSTATE a connection with {@code options} is refused with. */
    private static String refusal(PgConnectOptions options) throws Exception {
        Pool pool = pool(options);
        try {
            await(pool.query("SELECT 1").execute());
            throw new AssertionError("connected as " + options.getUser());
        } catch (ExecutionException e) {
            if (e.getCause() instanceof PgException refused) {
                return refused.getSqlState();
            }
            throw e;
        } finally {
            await(pool.close());
        }
    }
}
