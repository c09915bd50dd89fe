package dev.taskline.journal;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.io.InputStream;
import java.io.OutputStream;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.attribute.PosixFilePermission;
import java.nio.file.attribute.PosixFilePermissions;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import java.util.logging.Logger;
import java.util.stream.Collectors;

/**
 * The PostgreSQL that a node starts for itself when no URL is configured: a child process whose
 * data lives under the node's data directory and survives restarts.
 *
 * <p>It takes only its owner. It listens on loopback TCP alone (no Unix socket, which would sit in
 * a directory open to all) and asks every role for its password (scram-sha-256); the passwords are
 * made at the cluster's first start and kept in the data directory, readable by the node's user
 * alone ({@link EmbeddedPasswords}). The node connects as {@code taskline}, which owns the journal
 * but is no superuser: it cannot run programs ({@code COPY ... TO PROGRAM}), read files or other
 * roles' data. The data directory is the node's user's alone (0700), and so are the binaries,
 * unpacked under it. A cluster made before it had passwords (one that trusted every local
 * connection) gets them, and its journal is handed to {@code taskline}, at its next start.
 *
 * <p>A node holds its data directory for as long as it runs ({@link DataDirectoryLock}, an OS lock
 * that ends with the process): a second node started on it refuses to start and touches nothing,
 * neither the running node's files nor its PostgreSQL. After the node is killed with SIGKILL,
 * PostgreSQL outlives it and keeps its {@code postmaster.pid}. A new start would then fail, or
 * worse run a second server on the same data, so {@link #start}, once it holds the directory (and
 * so knows that node is gone), asks such a leftover to shut down (fast mode: it rolls back open
 * transactions, which are the dead node's) and waits for it.
 *
 * <p>Everything here blocks: call it before deploying verticles or on a worker thread.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(EmbeddedPostgresServer.class.getName());
    private static final Duration LEFTOVER_STOP_WAIT = Duration.ofSeconds(60);
    private static final Duration ZOMBIE_WAIT = Duration.ofSeconds(5);
    private static final Duration SETUP_WAIT = Duration.ofSeconds(120);
    private static final Set<PosixFilePermission> OWNER_ONLY = PosixFilePermissions.fromString("rwx------");

    /**
     * Written over initdb's at every start, before the server is: no {@code trust} line, so that no
     * start ever opens a window in which a local user connects without a password.
     */
    private static final String PG_HBA = """
            # Written by Taskline at every start of its embedded PostgreSQL: every role gives its
            # password (scram-sha-256; the node's are in ../pgpass), over loopback TCP only. There is
            # no Unix socket (unix_socket_directories is empty). Edits here are overwritten.
            host  all  all  127.0.0.1/32  scram-sha-256
            host  all  all  ::1/128       scram-sha-256
            """;

    private final EmbeddedPostgres postgres;
    private final EmbeddedPasswords passwords;
    private final DataDirectoryLock lock;

    private EmbeddedPostgresServer(EmbeddedPostgres postgres, EmbeddedPasswords passwords, DataDirectoryLock lock) {
        this.postgres = postgres;
        this.passwords = passwords;
        this.lock = lock;
    }

    public static EmbeddedPostgresServer start(Path dataDir) throws IOException {
        return start(dataDir, true);
    }

    /**
     * @param durable false only for throw-away test databases: it turns off fsync and synchronous
     *                commit, which makes creating a database per test class seconds faster
     */
    public static EmbeddedPostgresServer start(Path dataDir, boolean durable) throws IOException {
        Path home = dataDir.toAbsolutePath().normalize();
        ownerOnly(home);
        // Before anything on the data is touched: a running node's PostgreSQL is no leftover.
        DataDirectoryLock lock = DataDirectoryLock.take(home);
        try {
            return start(home, durable, lock);
        } catch (IOException | RuntimeException | Error e) {
            try {
                lock.close();
            } catch (IOException closing) {
                e.addSuppressed(closing);
            }
            throw e;
        }
    }

    private static EmbeddedPostgresServer start(Path home, boolean durable, DataDirectoryLock lock) throws IOException {
        Path pgData = home.resolve("pg");
        stopLeftover(pgData);
        EmbeddedPasswords saved = EmbeddedPasswords.load(home);
        EmbeddedPasswords passwords = saved != null ? saved : EmbeddedPasswords.generate(new SecureRandom());
        // A new cluster has no roles of ours yet, though a pgpass may survive from one deleted.
        boolean needsRoles = saved == null || !Files.isRegularFile(pgData.resolve("postgresql.conf"));
        PrivateBinaries binaries = new PrivateBinaries(home.resolve("postgres-binaries"));
        EmbeddedPostgres postgres;
        try {
            postgres = EmbeddedPostgres.builder()
                    .setPgBinaryResolver(binaries)
                    .setOverrideWorkingDirectory(binaries.workingDir().toFile())
                    .setDataDirectory(pgData)
                    .setCleanDataDirectory(false)
                    // After initdb (whose pg_hba trusts everyone), before the server starts.
                    .setDataDirectoryCustomizer(dir -> {
                        try {
                            Files.writeString(dir.toPath().resolve("pg_hba.conf"), PG_HBA);
                            if (needsRoles) {
                                setUp(binaries, dir.toPath(), passwords);
                            }
                            if (saved == null) {
                                passwords.save(home);
                            }
                        } catch (IOException e) {
                            throw new UncheckedIOException(e);
                        }
                    })
                    // The library checks the server is up by connecting: as the node will.
                    .setConnectConfig("user", EmbeddedPasswords.APP_ROLE)
                    .setConnectConfig("password", passwords.app())
                    .setServerConfig("listen_addresses", "localhost")
                    .setServerConfig("unix_socket_directories", "")
                    .setServerConfig("password_encryption", "scram-sha-256")
                    // The library's defaults favour test speed; a journal must survive a power cut.
                    .setServerConfig("synchronous_commit", durable ? "on" : "off")
                    .setServerConfig("fsync", durable ? "on" : "off")
                    // The largest pool a config allows (200), the connection that journals new tasks, and a
                    // few left for an operator's psql.
                    .setServerConfig("max_connections", "210")
                    // Sized for a journal under load on a small machine: fewer checkpoints mean fewer
                    // full-page images in the WAL. None of this trades durability.
                    .setServerConfig("shared_buffers", "256MB")
                    .setServerConfig("wal_buffers", "16MB")
                    .setServerConfig("max_wal_size", "4GB")
                    .setServerConfig("checkpoint_timeout", "15min")
                    .setPGStartupWait(Duration.ofSeconds(60))
                    // The library's own shutdown hook would stop PostgreSQL while the node still drains on
                    // SIGTERM (hooks run concurrently); the node closes it itself, last. A node that dies
                    // without closing it leaves a leftover, which the next start stops (see stopLeftover).
                    .setRegisterShutdownHook(false)
                    .start();
        } catch (UncheckedIOException e) {
            throw e.getCause();
        }
        if (EmbeddedPasswords.posix()) {
            // The library makes its working directory writable by all at every start; under the
            // node's own directory that harms nobody, but it need not stay so.
            Files.setPosixFilePermissions(binaries.workingDir(), OWNER_ONLY);
        }
        LOG.info("embedded PostgreSQL on localhost:" + postgres.getPort() + ", data in " + pgData + ", passwords in "
                + home.resolve(EmbeddedPasswords.FILE) + " (for psql: PGPASSFILE)");
        return new EmbeddedPostgresServer(postgres, passwords, lock);
    }

    /** Connects as the node's role, {@code taskline}, which owns the journal and is no superuser. */
    public String url() {
        return url(EmbeddedPasswords.APP_ROLE, passwords.app());
    }

    /** Connects as the cluster's superuser: for tests that make databases, and for nothing the node does. */
    public String adminUrl() {
        return url(EmbeddedPasswords.SUPERUSER, passwords.superuser());
    }

    /** The role {@link #url} connects as, which may own databases made for it. */
    public String role() {
        return EmbeddedPasswords.APP_ROLE;
    }

    private String url(String role, String password) {
        // Made passwords are base64url: nothing to escape in a URL.
        return "postgresql://" + role + ":" + password + "@localhost:" + postgres.getPort() + "/postgres";
    }

    public int port() {
        return postgres.getPort();
    }

    /** Stops PostgreSQL, then lets the data directory go: another node may take it from then on. */
    @Override
    public void close() throws IOException {
        try {
            postgres.close();
        } finally {
            lock.close();
        }
    }

    /**
     * Makes {@code dir} (and so the passwords and binaries in it) the node's user's alone. One that
     * others could write to is refused rather than mended: what is in it may be theirs.
     */
    private static void ownerOnly(Path dir) throws IOException {
        if (!EmbeddedPasswords.posix()) {
            Files.createDirectories(dir);
            return;
        }
        if (!Files.isDirectory(dir)) {
            Files.createDirectories(dir, PosixFilePermissions.asFileAttribute(OWNER_ONLY));
        }
        Set<PosixFilePermission> now = Files.getPosixFilePermissions(dir);
        if (now.contains(PosixFilePermission.GROUP_WRITE) || now.contains(PosixFilePermission.OTHERS_WRITE)) {
            throw new IOException(
                    dir + " is " + PosixFilePermissions.toString(now) + ": others may write to it, and so "
                            + "may have put binaries or passwords of theirs in it; use a directory only the node's user can write");
        }
        if (!now.equals(OWNER_ONLY)) {
            LOG.warning(dir + " was " + PosixFilePermissions.toString(now) + "; it holds the journal's passwords, "
                    + "so it is made the node's user's alone (rwx------)");
            Files.setPosixFilePermissions(dir, OWNER_ONLY);
        }
    }

    /**
     * Gives the cluster in {@code pgData} its roles and passwords (sql/embedded/setup.sql), in
     * single-user mode: no server is running, none listens, and the passwords travel on a pipe.
     */
    static void setUp(PrivateBinaries binaries, Path pgData, EmbeddedPasswords passwords) throws IOException {
        String script;
        try (InputStream in = EmbeddedPostgresServer.class.getResourceAsStream("/sql/embedded/setup.sql")) {
            if (in == null) {
                throw new IllegalStateException("missing SQL resource /sql/embedded/setup.sql");
            }
            script = new String(in.readAllBytes(), StandardCharsets.UTF_8);
        }
        String text = script.lines()
                .filter(line -> !line.trim().startsWith("--"))
                .collect(Collectors.joining("\n", "", "\n\n"))
                .replace(":superuser_password", literal(passwords.superuser()))
                .replace(":app_password", literal(passwords.app()));
        // Its output goes to a file (in the node's own directory: a failed statement is echoed with
        // its text), so that waiting on the process, not on its output, bounds the wait.
        Path log = pgData.resolveSibling("setup.log");
        Files.deleteIfExists(log);
        Process process = new ProcessBuilder(
                        binaries.command("postgres", List.of("--single", "-j", "-D", pgData.toString(), "postgres")))
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        String output;
        try {
            try (OutputStream stdin = process.getOutputStream()) {
                stdin.write(text.getBytes(StandardCharsets.UTF_8));
            }
            if (!process.waitFor(SETUP_WAIT.toSeconds(), TimeUnit.SECONDS)) {
                process.destroyForcibly();
                throw new IOException(
                        "setting up the embedded PostgreSQL's roles took over " + SETUP_WAIT.toSeconds() + " s");
            }
            output = Files.readString(log);
        } catch (InterruptedException e) {
            process.destroyForcibly();
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while setting up the embedded PostgreSQL's roles", e);
        } finally {
            Files.deleteIfExists(log);
        }
        // Single-user mode goes on past a failed statement; its exit code only tells a fatal one.
        if (process.exitValue() != 0 || output.contains("ERROR:") || output.contains("FATAL:")) {
            throw new IOException("setting up the embedded PostgreSQL's roles failed (exit " + process.exitValue()
                    + "):\n" + output.replace(passwords.superuser(), "***").replace(passwords.app(), "***"));
        }
    }

    private static String literal(String password) {
        return "'" + password.replace("'", "''") + "'";
    }

    static void stopLeftover(Path pgData) throws IOException {
        Path pidFile = pgData.resolve("postmaster.pid");
        if (!Files.isRegularFile(pidFile)) {
            return;
        }
        List<String> lines = Files.readAllLines(pidFile);
        if (lines.isEmpty()) {
            return;
        }
        long pid;
        try {
            pid = Long.parseLong(lines.get(0).trim());
        } catch (NumberFormatException e) {
            return; // PostgreSQL itself clears a pid file it cannot use
        }
        Optional<ProcessHandle> process = ProcessHandle.of(pid)
                .filter(ProcessHandle::isAlive)
                .filter(p -> p.info().command().map(c -> c.contains("postgres")).orElse(false));
        if (process.isEmpty()) {
            return; // stale file from a server that is gone; PostgreSQL starts over it
        }
        LOG.warning("a PostgreSQL (pid " + pid + ") from an earlier run still holds " + pgData + "; stopping it");
        try {
            // SIGINT is PostgreSQL's fast shutdown; ProcessHandle only offers TERM (smart: waits for
            // clients) and KILL (leaves shared memory behind), hence kill(1).
            new ProcessBuilder("kill", "-INT", Long.toString(pid))
                    .inheritIO()
                    .start()
                    .waitFor();
            // PostgreSQL removes its pid file as the last step of a clean shutdown. Waiting on that,
            // rather than on the process, also works where nobody reaps the orphan and it lingers as a
            // zombie (a JVM as PID 1 in a container).
            long deadline = System.nanoTime() + LEFTOVER_STOP_WAIT.toNanos();
            while (Files.exists(pidFile) && process.get().isAlive()) {
                if (System.nanoTime() > deadline) {
                    throw new IOException("the leftover PostgreSQL " + pid + " on " + pgData + " did not stop within "
                            + LEFTOVER_STOP_WAIT.toSeconds() + " s");
                }
                Thread.sleep(50);
            }
            // Give a reaping init a moment to collect it, so that nothing of it is left in the table;
            // where nobody reaps, the zombie is harmless and we go on.
            try {
                process.get().onExit().get(ZOMBIE_WAIT.toMillis(), java.util.concurrent.TimeUnit.MILLISECONDS);
            } catch (java.util.concurrent.TimeoutException | java.util.concurrent.ExecutionException e) {
                LOG.fine("PostgreSQL " + pid + " stopped but was not reaped yet");
            }
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new IOException("interrupted while stopping the leftover PostgreSQL " + pid, e);
        }
    }
}
