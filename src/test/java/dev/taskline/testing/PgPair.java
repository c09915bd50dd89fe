package dev.taskline.testing;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * A primary and a synchronous standby made from the machine's PostgreSQL 15 binaries (initdb,
 * pg_basebackup, pg_ctl), on two loopback ports: what a managed PostgreSQL with a standby is, so that
 * a test can kill the primary as a machine dies (SIGKILL to the postmaster and every backend) and
 * promote the standby as an operator or Patroni would.
 */
public final class PgPair implements AutoCloseable {

    public static final String DATABASE = "taskline";

    private final PgCommands commands;
    private final Path dir;
    private final int primaryPort;
    private final int standbyPort;
    private boolean primaryAlive;

    private PgPair(PgCommands commands, Path dir, int primaryPort, int standbyPort) {
        this.commands = commands;
        this.dir = dir;
        this.primaryPort = primaryPort;
        this.standbyPort = standbyPort;
    }

    /** The directory of the machine's PostgreSQL 15 binaries, or null where it has none. */
    public static Path binaries() {
        return PgCommands.binaries();
    }

    /**
     * Makes and starts both; returns once the standby streams synchronously: from then on a commit
     * the primary acknowledges is on the standby's disk too ({@code synchronous_commit = on}).
     */
    public static PgPair start(Path bin) throws Exception {
        Path dir = Files.createTempDirectory("taskline-pg-pair");
        PgPair pair = new PgPair(new PgCommands(bin, dir), dir, PgCommands.freePort(), PgCommands.freePort());
        try {
            pair.makePrimary();
            pair.makeStandby();
            pair.makeSynchronous();
        } catch (Exception e) {
            pair.close();
            throw e;
        }
        return pair;
    }

    private void makePrimary() throws Exception {
        Path data = dir.resolve("primary");
        commands.run("initdb", "-D", data.toString(), "-U", "postgres", "-A", "trust", "--no-sync");
        PgCommands.append(
                data.resolve("postgresql.conf"),
                String.join(
                        "\n",
                        "",
                        "port = " + primaryPort,
                        "listen_addresses = '127.0.0.1'",
                        "unix_socket_directories = '" + dir + "'",
                        "wal_level = replica",
                        "max_wal_senders = 4",
                        // Synchronous once the standby streams: until then a commit would wait for it.
                        "synchronous_standby_names = ''",
                        "synchronous_commit = on",
                        "max_connections = 100",
                        ""));
        PgCommands.append(data.resolve("pg_hba.conf"), "host replication all 127.0.0.1/32 trust\n");
        commands.run(
                "pg_ctl",
                "-D",
                data.toString(),
                "-l",
                dir.resolve("primary.log").toString(),
                "-w",
                "start");
        primaryAlive = true;
        commands.sql(primaryPort, "CREATE DATABASE " + DATABASE);
    }

    private void makeStandby() throws Exception {
        Path data = dir.resolve("standby");
        commands.run(
                "pg_basebackup",
                "-h",
                "127.0.0.1",
                "-p",
                Integer.toString(primaryPort),
                "-U",
                "postgres",
                "-D",
                data.toString(),
                "-R",
                "-X",
                "stream",
                "--checkpoint=fast",
                "--no-sync");
        // Its own port; and once promoted it has no standby of its own to wait for.
        PgCommands.append(
                data.resolve("postgresql.conf"), "\nport = " + standbyPort + "\nsynchronous_standby_names = ''\n");
        commands.run(
                "pg_ctl",
                "-D",
                data.toString(),
                "-l",
                dir.resolve("standby.log").toString(),
                "-w",
                "start");
    }

    /**
     * Names the standby synchronous, then commits a write: with {@code synchronous_commit = on} the
     * commit returns only once a synchronous standby has it, which is the signal that it is one.
     */
    private void makeSynchronous() throws Exception {
        commands.sql(primaryPort, "ALTER SYSTEM SET synchronous_standby_names = '*'");
        commands.sql(primaryPort, "SELECT pg_reload_conf()");
        commands.sql(primaryPort, "CREATE TABLE taskline_pair_synchronous ()");
        String sync = commands.sql(primaryPort, "SELECT count(*) FROM pg_stat_replication WHERE sync_state = 'sync'");
        if (!sync.trim().equals("1")) {
            throw new IOException("the standby is not synchronous (" + sync.trim() + ")");
        }
    }

    /** {@code postgresql://postgres@127.0.0.1:P1,127.0.0.1:P2/taskline?target_session_attrs=read-write} */
    public String url() {
        return "postgresql://postgres@127.0.0.1:" + primaryPort + ",127.0.0.1:" + standbyPort + "/" + DATABASE
                + "?target_session_attrs=read-write";
    }

    /** The primary alone, as a URL. */
    public String primaryUrl() {
        return "postgresql://postgres@127.0.0.1:" + primaryPort + "/" + DATABASE;
    }

    /** A superuser's statement on the standby: to pause its replay, say. */
    public String standbySql(String statement) throws Exception {
        return commands.sql(standbyPort, statement);
    }

    /** The standby alone, as a URL: where a test reads after the failover. */
    public String standbyUrl() {
        return "postgresql://postgres@127.0.0.1:" + standbyPort + "/" + DATABASE;
    }

    /** The primary dies as its machine would: the postmaster and every backend at once, SIGKILL. */
    public void killPrimary() throws IOException {
        long pid = Long.parseLong(Files.readAllLines(dir.resolve("primary").resolve("postmaster.pid"))
                .get(0)
                .trim());
        ProcessHandle postmaster = ProcessHandle.of(pid).orElseThrow(() -> new IOException("no primary " + pid));
        // The postmaster first: a backend killed before it would make it tell the others to quit,
        // which a machine that dies says to no one.
        List<ProcessHandle> all = new ArrayList<>(List.of(postmaster));
        all.addAll(postmaster.descendants().toList());
        all.forEach(ProcessHandle::destroyForcibly);
        for (ProcessHandle p : all) {
            p.onExit().orTimeout(PgCommands.WAIT_S, TimeUnit.SECONDS).join();
        }
        primaryAlive = false;
    }

    /** The standby becomes the primary (pg_ctl promote, waiting until it accepts writes). */
    public void promote() throws Exception {
        commands.run("pg_ctl", "-D", dir.resolve("standby").toString(), "-w", "promote");
    }

    @Override
    public void close() throws Exception {
        if (primaryAlive) {
            commands.stop(dir.resolve("primary"));
        }
        commands.stop(dir.resolve("standby"));
        TestPostgres.deleteTree(dir);
    }
}
