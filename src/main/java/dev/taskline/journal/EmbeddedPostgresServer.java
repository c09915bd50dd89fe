package dev.taskline.journal;

import io.zonky.test.db.postgres.embedded.EmbeddedPostgres;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Optional;
import java.util.logging.Logger;

/**
 * The PostgreSQL that a node starts for itself when no URL is configured: a child process whose
 * data lives under the node's data directory and survives restarts.
 *
 * <p>After the node is killed with SIGKILL, PostgreSQL outlives it and keeps its
 * {@code postmaster.pid}. A new start would then fail, or worse run a second server on the same
 * data, so {@link #start} first asks such a leftover to shut down (fast mode: it rolls back open
 * transactions, which are the dead node's) and waits for it.
 *
 * <p>Everything here blocks: call it before deploying verticles or on a worker thread.
 */
public final class EmbeddedPostgresServer implements AutoCloseable {

    private static final Logger LOG = Logger.getLogger(EmbeddedPostgresServer.class.getName());
    private static final Duration LEFTOVER_STOP_WAIT = Duration.ofSeconds(60);
    private static final Duration ZOMBIE_WAIT = Duration.ofSeconds(5);

    private final EmbeddedPostgres postgres;

    private EmbeddedPostgresServer(EmbeddedPostgres postgres) {
        this.postgres = postgres;
    }

    public static EmbeddedPostgresServer start(Path dataDir) throws IOException {
        return start(dataDir, true);
    }

    /**
     * @param durable false only for throw-away test databases: it turns off fsync and synchronous
     *                commit, which makes creating a database per test class seconds faster
     */
    public static EmbeddedPostgresServer start(Path dataDir, boolean durable) throws IOException {
        Path pgData = dataDir.toAbsolutePath().normalize().resolve("pg");
        Files.createDirectories(pgData.getParent());
        stopLeftover(pgData);
        EmbeddedPostgres postgres = EmbeddedPostgres.builder()
                .setDataDirectory(pgData)
                .setCleanDataDirectory(false)
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
        LOG.info("embedded PostgreSQL on port " + postgres.getPort() + ", data in " + pgData);
        return new EmbeddedPostgresServer(postgres);
    }

    /** Connects as the embedded cluster's superuser, which trusts local connections. */
    public String url() {
        return "postgresql://postgres@localhost:" + postgres.getPort() + "/postgres";
    }

    public int port() {
        return postgres.getPort();
    }

    @Override
    public void close() throws IOException {
        postgres.close();
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
