package dev.taskline.testing;

import java.nio.file.Files;
import java.nio.file.Path;

/**
 * A PostgreSQL 15 from the machine's binaries that takes connections over TLS only ({@code
 * hostnossl ... reject}), with a certificate for {@code localhost} (and no other name) signed by a
 * root the test made with openssl, and a second root that signed nothing of it.
 */
public final class PgTls implements AutoCloseable {

    public static final String DATABASE = "taskline";

    private final PgCommands commands;
    private final Path dir;
    private final int port;
    private boolean running;

    private PgTls(PgCommands commands, Path dir, int port) {
        this.commands = commands;
        this.dir = dir;
        this.port = port;
    }

    public static PgTls start(Path bin) throws Exception {
        Path dir = Files.createTempDirectory("taskline-pg-tls");
        PgTls server = new PgTls(new PgCommands(bin, dir), dir, PgCommands.freePort());
        try {
            server.certificates();
            server.make();
        } catch (Exception e) {
            server.close();
            throw e;
        }
        return server;
    }

    private void certificates() throws Exception {
        for (String root : new String[] {"root", "other-root"}) {
            openssl(
                    "req",
                    "-x509",
                    "-newkey",
                    "rsa:2048",
                    "-nodes",
                    "-days",
                    "2",
                    "-subj",
                    "/CN=taskline test " + root,
                    "-keyout",
                    dir.resolve(root + ".key").toString(),
                    "-out",
                    dir.resolve(root + ".crt").toString());
        }
        openssl(
                "req",
                "-newkey",
                "rsa:2048",
                "-nodes",
                "-subj",
                "/CN=localhost",
                "-keyout",
                dir.resolve("server.key").toString(),
                "-out",
                dir.resolve("server.csr").toString());
        Files.writeString(dir.resolve("san.ext"), "subjectAltName = DNS:localhost\n");
        openssl(
                "x509",
                "-req",
                "-in",
                dir.resolve("server.csr").toString(),
                "-days",
                "2",
                "-CA",
                dir.resolve("root.crt").toString(),
                "-CAkey",
                dir.resolve("root.key").toString(),
                "-CAcreateserial",
                "-extfile",
                dir.resolve("san.ext").toString(),
                "-out",
                dir.resolve("server.crt").toString());
    }

    private void openssl(String... args) throws Exception {
        commands.run("/usr/bin/openssl", args);
    }

    private void make() throws Exception {
        Path data = dir.resolve("data");
        commands.run("initdb", "-D", data.toString(), "-U", "postgres", "-A", "trust", "--no-sync");
        Files.copy(dir.resolve("server.crt"), data.resolve("server.crt"));
        Files.copy(dir.resolve("server.key"), data.resolve("server.key"));
        Files.setPosixFilePermissions(
                data.resolve("server.key"), java.nio.file.attribute.PosixFilePermissions.fromString("rw-------"));
        PgCommands.append(
                data.resolve("postgresql.conf"),
                String.join(
                        "\n",
                        "",
                        "port = " + port,
                        "listen_addresses = 'localhost'",
                        "unix_socket_directories = '" + dir + "'",
                        "ssl = on",
                        "ssl_cert_file = 'server.crt'",
                        "ssl_key_file = 'server.key'",
                        ""));
        Files.writeString(
                data.resolve("pg_hba.conf"),
                "local all all trust\n"
                        + "hostssl all all 127.0.0.1/32 trust\nhostssl all all ::1/128 trust\n"
                        + "hostnossl all all 0.0.0.0/0 reject\nhostnossl all all ::/0 reject\n");
        commands.run(
                "pg_ctl", "-D", data.toString(), "-l", dir.resolve("server.log").toString(), "-w", "start");
        running = true;
        commands.sql(port, "CREATE DATABASE " + DATABASE);
    }

    /** {@code postgresql://postgres@HOST:PORT/taskline?QUERY}. */
    public String url(String host, String query) {
        return "postgresql://postgres@" + host + ":" + port + "/" + DATABASE + (query.isEmpty() ? "" : "?" + query);
    }

    /** The root that signed the server's certificate (or, {@code other}, one that did not), as a path. */
    public Path root(boolean other) {
        return dir.resolve(other ? "other-root.crt" : "root.crt");
    }

    /** Whether every client connection to the test's database is encrypted, by pg_stat_ssl. */
    public String encryptedConnections() throws Exception {
        return commands.sql(
                        port,
                        "SELECT count(*) FILTER (WHERE s.ssl) || '/' || count(*) FROM pg_stat_activity a"
                                + " JOIN pg_stat_ssl s USING (pid) WHERE a.datname = '" + DATABASE + "'")
                .trim();
    }

    @Override
    public void close() throws Exception {
        if (running) {
            commands.stop(dir.resolve("data"));
        }
        TestPostgres.deleteTree(dir);
    }
}
