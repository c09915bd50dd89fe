package dev.taskline.testing;

import dev.taskline.journal.PgUrl;
import io.vertx.pgclient.PgConnectOptions;
import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.TimeUnit;

/**
 * Debian's PgBouncer in transaction pooling mode in front of one database, on a loopback port of
 * its own, as a managed pooler would stand: clients connect to it as to PostgreSQL (no password:
 * trust, on loopback), and it logs in to PostgreSQL with the database's own credentials. It runs in
 * the foreground as this process's child (under {@code unshare -U} as root, since it refuses root),
 * so that it can be stopped as a crash would stop it and started again on the same port.
 */
public final class PgBouncer implements AutoCloseable {

    private static final Path BINARY = Path.of("/usr/sbin/pgbouncer");

    private final Path dir;
    private final Path ini;
    private final int port;
    private final PgConnectOptions upstream;
    private final List<String> log = new ArrayList<>();
    private Process process;

    private PgBouncer(Path dir, int port, PgConnectOptions upstream) throws IOException {
        this.dir = dir;
        this.port = port;
        this.upstream = upstream;
        this.ini = dir.resolve("pgbouncer.ini");
        Files.writeString(dir.resolve("users.txt"), "\"" + upstream.getUser() + "\" \"\"\n", StandardCharsets.UTF_8);
        Files.writeString(
                ini,
                String.join(
                        "\n",
                        "[databases]",
                        upstream.getDatabase() + " = host=" + upstream.getHost() + " port=" + upstream.getPort()
                                + " dbname=" + upstream.getDatabase() + " user=" + upstream.getUser()
                                + (upstream.getPassword() == null ? "" : " password=" + upstream.getPassword()),
                        "[pgbouncer]",
                        "listen_addr = 127.0.0.1",
                        "listen_port = " + port,
                        "unix_socket_dir =",
                        "auth_type = trust",
                        "auth_file = " + dir.resolve("users.txt"),
                        "admin_users = " + upstream.getUser(),
                        "pool_mode = transaction",
                        "max_client_conn = 500",
                        "default_pool_size = 20",
                        "server_check_delay = 0",
                        ""),
                StandardCharsets.UTF_8);
    }

    /** Whether the machine has Debian's PgBouncer ({@code .ci/run} installs it). */
    public static boolean installed() {
        return Files.isExecutable(BINARY);
    }

    /** A pooler in front of the database of {@code databaseUrl}, started. */
    public static PgBouncer start(String databaseUrl) throws Exception {
        Path dir = Files.createTempDirectory("taskline-pgbouncer");
        PgBouncer bouncer = new PgBouncer(dir, PgCommands.freePort(), PgUrl.parse(databaseUrl));
        bouncer.start();
        return bouncer;
    }

    /** The URL a node connects through: the pooler's port, the database's name and user. */
    public String url() {
        return "postgresql://" + upstream.getUser() + "@127.0.0.1:" + port + "/" + upstream.getDatabase();
    }

    /** Starts it (again, after {@link #kill}) and returns once it says it accepts connections. */
    public synchronized void start() throws Exception {
        Process started = new ProcessBuilder(PgCommands.notAsRoot(List.of(BINARY.toString(), ini.toString())))
                .redirectErrorStream(true)
                .start();
        CompletableFuture<Void> up = new CompletableFuture<>();
        Thread reader = new Thread(
                () -> {
                    try (BufferedReader lines = new BufferedReader(
                            new InputStreamReader(started.getInputStream(), StandardCharsets.UTF_8))) {
                        String line;
                        while ((line = lines.readLine()) != null) {
                            synchronized (log) {
                                log.add(line);
                            }
                            if (line.contains("process up")) {
                                up.complete(null);
                            }
                        }
                    } catch (IOException e) {
                        // the process ended; what it said is in the log
                    }
                    up.completeExceptionally(new IOException("pgbouncer ended: " + log()));
                },
                "pgbouncer-log");
        reader.setDaemon(true);
        reader.start();
        up.get(PgCommands.WAIT_S, TimeUnit.SECONDS);
        process = started;
    }

    /** Ends it at once, as a crash would: every client's connection drops mid-statement. */
    public synchronized void kill() throws InterruptedException {
        Process now = process;
        process = null;
        if (now != null) {
            now.destroyForcibly();
            now.waitFor(PgCommands.WAIT_S, TimeUnit.SECONDS);
        }
    }

    /** What it logged, for a failure's message. */
    public String log() {
        synchronized (log) {
            return String.join("\n", log);
        }
    }

    @Override
    public void close() throws Exception {
        kill();
        TestPostgres.deleteTree(dir);
    }
}
