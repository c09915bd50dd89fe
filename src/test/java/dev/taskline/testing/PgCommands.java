package dev.taskline.testing;

import java.io.IOException;
import java.net.ServerSocket;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The machine's PostgreSQL 15 binaries (initdb, pg_ctl, pg_basebackup, psql), run as the tests'
 * servers need: as root (CI) under {@code unshare -U}, as the embedded server's are, since
 * PostgreSQL refuses root; each bounded in time, its output kept for the failure it explains.
 */
final class PgCommands {

    static final long WAIT_S = 60;

    private final Path bin;
    private final Path scratch;

    PgCommands(Path bin, Path scratch) {
        this.bin = bin;
        this.scratch = scratch;
    }

    /** The directory of the machine's PostgreSQL 15 binaries, or null where it has none. */
    static Path binaries() {
        for (String candidate : List.of("/usr/lib/postgresql/15/bin", "/usr/pgsql-15/bin")) {
            Path path = Path.of(candidate);
            if (Files.isExecutable(path.resolve("pg_basebackup"))) {
                return path;
            }
        }
        return null;
    }

    /** Runs {@code binary} with {@code args}; its output, or an IOException with it when it failed. */
    String run(String binary, String... args) throws Exception {
        List<String> command = new ArrayList<>();
        command.add(binary.contains("/") ? binary : bin.resolve(binary).toString());
        command.addAll(List.of(args));
        command = notAsRoot(command);
        Path out = Files.createTempFile(scratch, "out", ".txt");
        Process process = new ProcessBuilder(command)
                .redirectErrorStream(true)
                .redirectOutput(out.toFile())
                .start();
        if (!process.waitFor(WAIT_S, TimeUnit.SECONDS)) {
            process.destroyForcibly();
            throw new IOException(binary + " took over " + WAIT_S + " s");
        }
        String output = Files.readString(out);
        Files.delete(out);
        if (process.exitValue() != 0) {
            throw new IOException(binary + " failed (" + process.exitValue() + "): " + output);
        }
        return output;
    }

    /**
     * {@code command} as it must run here: as root (CI), under {@code unshare -U}, where PostgreSQL's
     * binaries and PgBouncer, which refuse root, see an unmapped user.
     */
    static List<String> notAsRoot(List<String> command) {
        if (!"root".equals(System.getProperty("user.name"))) {
            return command;
        }
        List<String> unshared = new ArrayList<>(List.of("unshare", "-U"));
        unshared.addAll(command);
        return unshared;
    }

    /** A superuser's statement on the server at {@code port}. */
    String sql(int port, String statement) throws Exception {
        return run(
                "psql",
                "-h",
                "127.0.0.1",
                "-p",
                Integer.toString(port),
                "-U",
                "postgres",
                "-d",
                "postgres",
                "-v",
                "ON_ERROR_STOP=1",
                "-At",
                "-c",
                statement);
    }

    /** Stops the server on {@code data} at once, if one runs there (immediate: the test is done with it). */
    void stop(Path data) throws Exception {
        if (Files.exists(data.resolve("postmaster.pid"))) {
            run("pg_ctl", "-D", data.toString(), "-m", "immediate", "-w", "stop");
        }
    }

    /** Adds {@code text} to a server's config file. */
    static void append(Path file, String text) throws IOException {
        Files.writeString(file, text, java.nio.charset.StandardCharsets.UTF_8, java.nio.file.StandardOpenOption.APPEND);
    }

    static int freePort() throws IOException {
        try (ServerSocket socket = new ServerSocket(0)) {
            return socket.getLocalPort();
        }
    }
}
