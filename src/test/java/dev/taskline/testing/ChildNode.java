package dev.taskline.testing;

import io.vertx.core.json.JsonObject;
import java.io.BufferedReader;
import java.io.File;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.UncheckedIOException;
import java.net.URI;
import java.net.http.HttpClient;
import java.net.http.HttpRequest;
import java.net.http.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardCopyOption;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.CompletableFuture;
import java.util.concurrent.ExecutionException;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.TimeoutException;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

/**
 * A Taskline node run as a separate JVM ({@code java -cp <test class path> dev.taskline.Main}), for
 * tests that must kill the process outright. It captures the child's log (stdout and stderr, merged)
 * on a thread, echoes it with a prefix to this JVM's stderr, and learns the HTTP port from the
 * node's "listening on" line. HTTP helpers go to 127.0.0.1 only and block the calling thread.
 */
public final class ChildNode implements AutoCloseable {

    private static final Pattern LISTENING =
            Pattern.compile("(node-[0-9a-f]+) listening on http://127\\.0\\.0\\.1:(\\d+)");
    private static final Duration REQUEST_TIMEOUT = Duration.ofSeconds(10);
    private static final HttpClient HTTP = HttpClient.newBuilder()
            .version(HttpClient.Version.HTTP_1_1)
            .connectTimeout(Duration.ofSeconds(5))
            .build();

    public final String name;
    private final Process process;
    private final StringBuffer log = new StringBuffer();
    private final CompletableFuture<Matcher> listening = new CompletableFuture<>();
    private final Thread reader;
    private volatile int port = -1;
    private volatile String nodeId;

    private ChildNode(String name, Process process) {
        this.name = name;
        this.process = process;
        this.reader = new Thread(this::readLog, "child-log-" + name);
        reader.setDaemon(true);
        reader.start();
        // A child that dies before it listens must not leave the waiter hanging until the deadline.
        process.onExit().thenRun(() -> {
            try {
                reader.join(2_000);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
            listening.completeExceptionally(new IllegalStateException(
                    name + " exited with code " + process.exitValue() + " before it was listening"));
        });
    }

    /**
     * Starts {@code dev.taskline.Main} in a new JVM with this JVM's java binary and class path.
     * {@code env} entries are set on top of this JVM's environment; a null value removes the variable.
     */
    public static ChildNode start(String name, Path workDir, Map<String, String> env) throws IOException {
        return start(name, workDir, env, System.getProperty("java.class.path"));
    }

    /** As {@link #start(String, Path, Map)}, with an explicit class path (see {@link #snapshotClassPath}). */
    public static ChildNode start(String name, Path workDir, Map<String, String> env, String classPath)
            throws IOException {
        Path java = Path.of(System.getProperty("java.home"), "bin", "java");
        ProcessBuilder builder = new ProcessBuilder(List.of(java.toString(), "-cp", classPath, "dev.taskline.Main"))
                .directory(workDir.toFile())
                .redirectErrorStream(true)
                .redirectInput(ProcessBuilder.Redirect.PIPE);
        Map<String, String> childEnv = builder.environment();
        env.forEach((key, value) -> {
            if (value == null) {
                childEnv.remove(key);
            } else {
                childEnv.put(key, value);
            }
        });
        return new ChildNode(name, builder.start());
    }

    /**
     * This JVM's class path with every directory entry (target/classes, target/test-classes) copied
     * under {@code into}; jars stay where they are. A child JVM loads classes lazily for seconds after
     * it starts, so a build running at the same time in the same tree (which rewrites target/classes)
     * would otherwise make it fail with NoClassDefFoundError halfway through.
     */
    public static String snapshotClassPath(Path into) throws IOException {
        // A concurrent build may delete a file while it is being walked: take a fresh copy then.
        for (int round = 1; ; round++) {
            try {
                return copyClassPath(into.resolve("round-" + round));
            } catch (IOException | UncheckedIOException e) {
                if (round == 3) {
                    throw e;
                }
            }
        }
    }

    private static String copyClassPath(Path into) throws IOException {
        List<String> entries = new ArrayList<>();
        int n = 0;
        for (String entry : System.getProperty("java.class.path").split(File.pathSeparator)) {
            Path source = Path.of(entry);
            if (entry.isEmpty() || !Files.isDirectory(source)) {
                entries.add(entry);
                continue;
            }
            Path target = into.resolve((n++) + "-" + source.getFileName());
            try (Stream<Path> files = Files.walk(source)) {
                for (Path file : (Iterable<Path>) files::iterator) {
                    Path copy = target.resolve(source.relativize(file).toString());
                    if (Files.isDirectory(file)) {
                        Files.createDirectories(copy);
                    } else {
                        Files.copy(file, copy, StandardCopyOption.REPLACE_EXISTING);
                    }
                }
            }
            entries.add(target.toString());
        }
        return String.join(File.pathSeparator, entries);
    }

    private void readLog() {
        try (BufferedReader in =
                new BufferedReader(new InputStreamReader(process.getInputStream(), StandardCharsets.UTF_8))) {
            String line;
            while ((line = in.readLine()) != null) {
                log.append(line).append('\n');
                System.err.println("[" + name + "] " + line);
                Matcher m = LISTENING.matcher(line);
                if (m.find()) {
                    nodeId = m.group(1);
                    port = Integer.parseInt(m.group(2));
                    listening.complete(m);
                }
            }
        } catch (IOException e) {
            log.append("<log reader stopped: ").append(e).append(">\n");
        }
    }

    /** Waits for the "listening on" line and returns the port; fails with the captured log otherwise. */
    public int awaitListening(Duration timeout) {
        try {
            listening.get(timeout.toMillis(), TimeUnit.MILLISECONDS);
            return port;
        } catch (TimeoutException e) {
            throw new AssertionError(
                    name + " did not log 'listening on http://127.0.0.1:<port>' within " + timeout
                            + "; its log so far:\n" + log(),
                    e);
        } catch (ExecutionException e) {
            throw new AssertionError(e.getCause().getMessage() + "; its log:\n" + log(), e.getCause());
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + name, e);
        }
    }

    public Process process() {
        return process;
    }

    public long pid() {
        return process.pid();
    }

    public int port() {
        return port;
    }

    /** The node id from the "listening on" line (worker ids are {@code <nodeId>/<queue>}). */
    public String nodeId() {
        return nodeId;
    }

    public String log() {
        return log.toString();
    }

    public boolean isAlive() {
        return process.isAlive();
    }

    /** Waits for the process to end by itself (a start it refuses); returns its exit code. */
    public int awaitExit(Duration timeout) {
        return awaitExit(timeout, "its start");
    }

    /** SIGKILL, then waits for the process to be gone; returns its exit code. */
    public int kill(Duration timeout) {
        process.destroyForcibly();
        return awaitExit(timeout, "SIGKILL");
    }

    /** SIGTERM (the node's shutdown hook runs), then waits; returns its exit code. */
    public int stop(Duration timeout) {
        process.destroy();
        return awaitExit(timeout, "SIGTERM");
    }

    private int awaitExit(Duration timeout, String what) {
        try {
            if (!process.waitFor(timeout.toMillis(), TimeUnit.MILLISECONDS)) {
                throw new AssertionError(name + " (pid " + process.pid() + ") did not exit within " + timeout + " of "
                        + what + "; its log:\n" + log());
            }
            reader.join(2_000);
            return process.exitValue();
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted waiting for " + name + " to exit", e);
        }
    }

    public HttpResponse<String> get(String path) {
        return send(
                HttpRequest.newBuilder(uri(path)).timeout(REQUEST_TIMEOUT).GET().build());
    }

    public HttpResponse<String> post(String path, JsonObject body) {
        return send(HttpRequest.newBuilder(uri(path))
                .timeout(REQUEST_TIMEOUT)
                .header("Content-Type", "application/json")
                .POST(HttpRequest.BodyPublishers.ofString(body.encode(), StandardCharsets.UTF_8))
                .build());
    }

    public HttpResponse<String> delete(String path) {
        return send(HttpRequest.newBuilder(uri(path))
                .timeout(REQUEST_TIMEOUT)
                .DELETE()
                .build());
    }

    /** GET that must answer 200 with a JSON object. */
    public JsonObject getJson(String path) {
        HttpResponse<String> response = get(path);
        if (response.statusCode() != 200) {
            throw new AssertionError(
                    "GET " + path + " on " + name + " answered " + response.statusCode() + ": " + response.body());
        }
        return new JsonObject(response.body());
    }

    private URI uri(String path) {
        if (port <= 0) {
            throw new IllegalStateException(name + " is not listening yet");
        }
        return URI.create("http://127.0.0.1:" + port + path);
    }

    private HttpResponse<String> send(HttpRequest request) {
        try {
            return HTTP.send(request, HttpResponse.BodyHandlers.ofString(StandardCharsets.UTF_8));
        } catch (IOException e) {
            throw new UncheckedIOException(
                    request.method() + " " + request.uri() + " on " + name + " failed"
                            + (process.isAlive() ? "" : " (the process has exited)"),
                    e);
        } catch (InterruptedException e) {
            Thread.currentThread().interrupt();
            throw new AssertionError("interrupted during " + request.method() + " " + request.uri(), e);
        }
    }

    /** Makes sure the process is gone: SIGKILL if it is still alive. Idempotent. */
    @Override
    public void close() {
        if (process.isAlive()) {
            process.destroyForcibly();
            try {
                process.waitFor(30, TimeUnit.SECONDS);
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
            }
        }
    }
}
