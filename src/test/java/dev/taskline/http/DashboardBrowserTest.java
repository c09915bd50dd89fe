package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonObject;
import java.awt.image.BufferedImage;
import java.io.BufferedReader;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.io.InputStreamReader;
import java.io.OutputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.TimeUnit;
import javax.imageio.ImageIO;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The dashboard in a real browser: starts a node and runs {@code src/test/browser/dashboard.test.mjs}
 * against it (headless Debian chromium driven by playwright-core), which also checks that an event
 * stream resumed with {@code Last-Event-ID} has no gap and no duplicate; the other scripts beside it
 * check sign-in with keys, expired tasks, schedules and flows (a script that needs the node's clock
 * moved asks for it with a {@code STEP} line, see {@link #run(Tools, Path, String, Map, Map)}).
 *
 * <p>Skipped (failed when {@code CI=true}) on a machine without {@code node} (20 or later), {@code /usr/bin/chromium}
 * (or {@code $CHROMIUM}) or {@code src/test/browser/node_modules/playwright-core} ({@code npm ci --prefix src/test/browser}), so that Java
 * and Maven alone still pass. The screenshot goes to {@code $TASKLINE_SCREENSHOT_DIR/dashboard.png}
 * when that is set (docs/dashboard.png, the README's picture, is made so), else {@code $SCREENSHOT}, else
 * {@code target/dashboard.png}.
 */
@Tag("browser")
class DashboardBrowserTest {

    private static final long SCRIPT_TIMEOUT_SECONDS = 240;

    /**
     * A missing prerequisite skips the test on a developer's machine, but fails it in CI, which
     * installs them: a browser test that silently never runs there would prove nothing.
     */
    private static void need(boolean present, String what) {
        if (!present && "true".equals(System.getenv("CI"))) {
            throw new AssertionError(what + "; .ci/run should have installed it");
        }
        assumeTrue(present, what + "; skipping the browser test");
    }

    /**
     * Where the dashboard's screenshot goes: {@code $TASKLINE_SCREENSHOT_DIR/<name>} when that is set
     * ({@code TASKLINE_SCREENSHOT_DIR=docs} makes the picture the README and the guides show, see
     * docs/development.md), else {@code $SCREENSHOT}, else {@code target/<name>}.
     */
    private static Path screenshot(Path project, String name) {
        String dir = System.getenv("TASKLINE_SCREENSHOT_DIR");
        if (dir != null && !dir.isBlank()) {
            return project.resolve(dir).resolve(name).toAbsolutePath();
        }
        return Path.of(
                envOr("SCREENSHOT", project.resolve("target").resolve(name).toString()));
    }

    /** What the browser tests run with: the project, a node of 20 or later, Chromium; each checked with {@link #need}. */
    private record Tools(Path project, String node, Path chromium) {}

    private static Tools tools() {
        Path project = Path.of(System.getProperty("user.dir")).toAbsolutePath();
        String node = findNode();
        need(node != null, "node 20 or later is not installed");
        Path chromium = Path.of(envOr("CHROMIUM", "/usr/bin/chromium"));
        need(Files.isExecutable(chromium), chromium + " is missing (apt-get install chromium)");
        need(
                Files.isRegularFile(project.resolve("src/test/browser/node_modules/playwright-core/package.json")),
                "src/test/browser/node_modules/playwright-core is missing (npm ci --prefix src/test/browser)");
        return new Tools(project, node, chromium);
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void the_dashboard_follows_a_batch_live_and_a_resumed_stream_has_no_gap() throws Exception {
        Tools tools = tools();
        Path project = tools.project();
        Path script = project.resolve("src/test/browser/dashboard.test.mjs");
        assumeTrue(Files.isRegularFile(script), script + " is missing");

        Path screenshot = screenshot(project, "dashboard.png");
        try (TestNode taskline = TestNode.start(TestPostgres.newDatabase(), """
        {"queues": {"default": {"slots": 4}, "matching": {"slots": 2, "capacity": 100}},
         "shutdown": {"graceMs": 1000}}
        """)) {
            String base = "http://127.0.0.1:" + taskline.node.httpPort();
            run(tools, script, base, java.util.Map.of("SCREENSHOT", screenshot.toString()));
        }
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void a_ranked_match_is_drawn_as_a_flow_coloured_live_by_state_and_its_ranking_shown() throws Exception {
        Tools tools = tools();
        Path screenshot = Path.of(envOr(
                "SCREENSHOT_FLOWS",
                tools.project().resolve("target/dashboard-flows.png").toString()));
        Files.deleteIfExists(screenshot);
        try (TestNode taskline = TestNode.start(TestPostgres.newDatabase(), """
        {"queues": {"default": {"slots": 4}, "matching": {"slots": 2, "capacity": 100}},
         "shutdown": {"graceMs": 1000}}
        """)) {
            String base = "http://127.0.0.1:" + taskline.node.httpPort();
            run(
                    tools,
                    tools.project().resolve("src/test/browser/dashboard-flows.test.mjs"),
                    base,
                    Map.of("SCREENSHOT", screenshot.toString()));
        }
        // The script looked at the picture's pixels; here, that it is a real picture of the view.
        BufferedImage image = ImageIO.read(screenshot.toFile());
        assertNotNull(image, screenshot + " is a PNG");
        assertTrue(
                image.getWidth() > 400 && image.getHeight() > 200,
                "the flow view is drawn at a readable size: " + image.getWidth() + "x" + image.getHeight());
        Set<Integer> colours = new HashSet<>();
        for (int y = 0; y < image.getHeight(); y += 3) {
            for (int x = 0; x < image.getWidth(); x += 3) {
                colours.add(image.getRGB(x, y) & 0xffffff);
            }
        }
        assertTrue(colours.contains(0xbbf7d0), "the succeeded colour of the boxes is in the screenshot");
        assertTrue(colours.size() > 20, "more than a few colours: " + colours.size());
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void with_keys_the_dashboard_signs_in_and_a_tenant_sees_only_its_tasks() throws Exception {
        Tools tools = tools();
        java.security.SecureRandom random = new java.security.SecureRandom();
        String acme = dev.taskline.auth.ApiKeys.newSecret(random);
        String globex = dev.taskline.auth.ApiKeys.newSecret(random);
        io.vertx.core.json.JsonObject config = new io.vertx.core.json.JsonObject()
                .put(
                        "auth",
                        new io.vertx.core.json.JsonObject()
                                .put(
                                        "keys",
                                        new io.vertx.core.json.JsonArray()
                                                .add(key("acme", acme, "acme"))
                                                .add(key("globex", globex, "globex"))));
        try (TestNode taskline = TestNode.start(TestPostgres.newDatabase(), config.encode())) {
            List<String> own = submit(taskline, acme, 3);
            List<String> other = submit(taskline, globex, 2);
            String base = "http://127.0.0.1:" + taskline.node.httpPort();
            run(
                    tools,
                    tools.project().resolve("src/test/browser/dashboard-auth.test.mjs"),
                    base,
                    java.util.Map.of(
                            "TL_KEY", acme, "TL_OWN", String.join(",", own), "TL_OTHER", String.join(",", other)));
        }
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void a_durable_tasks_steps_are_shown_as_a_timeline_that_follows_it_live() throws Exception {
        Tools tools = tools();
        try (TestNode taskline =
                TestNode.start(TestPostgres.newDatabase(), "{\"queues\": {\"default\": {\"slots\": 2}}}")) {
            String order = taskline.post(
                            "/api/tasks",
                            new io.vertx.core.json.JsonObject()
                                    .put("type", "order")
                                    .put("payload", new io.vertx.core.json.JsonObject().put("orderId", "o-1")))
                    .bodyAsJsonObject()
                    .getString("id");
            taskline.until("/api/tasks/" + order, t -> t.getValue("wait") != null);
            run(
                    tools,
                    tools.project().resolve("src/test/browser/dashboard-steps.test.mjs"),
                    "http://127.0.0.1:" + taskline.node.httpPort(),
                    java.util.Map.of("TL_TASK", order));
            assertEquals("succeeded", taskline.getJson("/api/tasks/" + order).getString("state"));
        }
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void an_expired_task_is_counted_in_its_queue_and_shown_in_the_recent_tasks() throws Exception {
        Tools tools = tools();
        dev.taskline.testing.GateHandler.reset();
        dev.taskline.testing.MutableClock clock = new dev.taskline.testing.MutableClock();
        try (TestNode taskline = TestNode.start(
                TestPostgres.newDatabase(), "{\"queues\": {\"default\": {\"slots\": 1, \"claimAhead\": 0}}}", clock)) {
            // The only slot held, a task with a deadline waits past it and expires.
            taskline.post("/api/tasks", new io.vertx.core.json.JsonObject().put("type", "gate"));
            dev.taskline.testing.GateHandler.Call holder = dev.taskline.testing.GateHandler.next(TestNode.WAIT);
            String late = taskline.post(
                            "/api/tasks",
                            new io.vertx.core.json.JsonObject()
                                    .put("type", "gate")
                                    .put("startWithinMs", 1000))
                    .bodyAsJsonObject()
                    .getString("id");
            clock.advance(java.time.Duration.ofSeconds(2));
            TestNode.await(taskline.node.passes().deadlines().runOnce());
            taskline.waitForState(late, "expired");
            String base = "http://127.0.0.1:" + taskline.node.httpPort();
            try {
                run(
                        tools,
                        tools.project().resolve("src/test/browser/dashboard-deadlines.test.mjs"),
                        base,
                        java.util.Map.of("TL_EXPIRED", late));
            } finally {
                holder.succeed(new io.vertx.core.json.JsonObject());
            }
        }
    }

    @Test
    @Timeout(value = 300, unit = TimeUnit.SECONDS)
    void a_schedule_is_listed_with_its_next_fire_time_and_last_result_and_paused_and_resumed_from_its_row()
            throws Exception {
        Tools tools = tools();
        dev.taskline.testing.MutableClock clock =
                new dev.taskline.testing.MutableClock(Instant.parse("2026-12-01T10:00:00.250Z"));
        String name = "heartbeat";
        Path screenshot = Path.of(envOr(
                "SCREENSHOT_SCHEDULES",
                tools.project().resolve("target/dashboard-schedules.png").toString()));
        try (TestNode taskline =
                TestNode.start(TestPostgres.newDatabase(), "{\"queues\": {\"default\": {\"slots\": 2}}}", clock)) {
            int[] ticks = {0};
            // Each tick the page asks for: the clock a second on, the scheduler's pass run by hand (its
            // own timer may decide the tick first: either way one task), and that task run to its end.
            Step tick = () -> {
                clock.advance(Duration.ofSeconds(1));
                TestNode.await(taskline.node.passes().scheduler().runOnce());
                int wanted = ++ticks[0];
                List<JsonObject> made = new ArrayList<>();
                taskline.until(
                        () -> {
                            made.clear();
                            for (Object o :
                                    taskline.getJson("/api/tasks?limit=100").getJsonArray("tasks")) {
                                JsonObject task = (JsonObject) o;
                                if (name.equals(task.getString("schedule"))) {
                                    made.add(task);
                                }
                            }
                            return made.size() == wanted
                                    && made.stream().allMatch(t -> "succeeded".equals(t.getString("state")));
                        },
                        () -> "waiting for " + wanted + " succeeded tasks of " + name + ": " + made);
                return made.stream()
                        .max(java.util.Comparator.comparing(t -> t.getString("scheduledFor")))
                        .orElseThrow()
                        .getString("id");
            };
            String base = "http://127.0.0.1:" + taskline.node.httpPort();
            run(
                    tools,
                    tools.project().resolve("src/test/browser/dashboard-schedules.test.mjs"),
                    base,
                    Map.of("TL_SCHEDULE", name, "SCREENSHOT", screenshot.toString()),
                    Map.of("tick", tick));
            assertEquals(2, ticks[0], "the page asked for two ticks");
        }
    }

    private static io.vertx.core.json.JsonObject key(String id, String secret, String tenant) {
        return new io.vertx.core.json.JsonObject()
                .put("id", id)
                .put("hash", dev.taskline.auth.ApiKeys.hash(secret))
                .put("tenant", tenant)
                .put("scopes", new io.vertx.core.json.JsonArray().add("submit").add("read"));
    }

    private static List<String> submit(TestNode taskline, String secret, int count) throws Exception {
        List<String> ids = new ArrayList<>();
        for (int i = 0; i < count; i++) {
            ids.add(TestNode.await(taskline.http
                            .post("/api/tasks")
                            .putHeader("Authorization", "Bearer " + secret)
                            .sendJsonObject(new io.vertx.core.json.JsonObject()
                                    .put("type", "sleep")
                                    .put("payload", new io.vertx.core.json.JsonObject().put("ms", 0))))
                    .bodyAsJsonObject()
                    .getString("id"));
        }
        return ids;
    }

    /** Runs a browser script against {@code base} and fails with its output unless it passes in time. */
    private static void run(Tools tools, Path script, String base, java.util.Map<String, String> env) throws Exception {
        run(tools, script, base, env, Map.of());
    }

    /** Something a browser script asks of the test while it runs (move the clock, run a pass); answers a line. */
    @FunctionalInterface
    private interface Step {
        String run() throws Exception;
    }

    /**
     * As above; a line {@code STEP <name>} the script prints runs that step of {@code steps}, and its
     * answer (or {@code FAIL <why>}) goes back on the script's stdin as one line, so that the script
     * waits on it rather than on time.
     */
    private static void run(Tools tools, Path script, String base, Map<String, String> env, Map<String, Step> steps)
            throws Exception {
        ProcessBuilder builder = new ProcessBuilder(tools.node(), script.toString(), base)
                .directory(tools.project().toFile())
                .redirectErrorStream(true);
        builder.environment().putAll(env);
        builder.environment().put("CHROMIUM", tools.chromium().toString());
        Process process = builder.start();
        ByteArrayOutputStream output = new ByteArrayOutputStream();
        List<Throwable> stepFailures = java.util.Collections.synchronizedList(new ArrayList<>());
        Thread reader = steps.isEmpty()
                ? drain(process.getInputStream(), output)
                : follow(process.getInputStream(), process.getOutputStream(), output, steps, stepFailures);
        boolean finished = process.waitFor(SCRIPT_TIMEOUT_SECONDS, TimeUnit.SECONDS);
        if (!finished) {
            process.descendants().forEach(ProcessHandle::destroyForcibly);
            process.destroyForcibly();
            process.waitFor(10, TimeUnit.SECONDS);
        }
        reader.join(10_000);
        String log = output.toString(StandardCharsets.UTF_8);
        System.out.println(log);
        if (!finished) {
            throw new AssertionError(
                    "the browser test did not finish within " + SCRIPT_TIMEOUT_SECONDS + " s:\n" + log);
        }
        if (!stepFailures.isEmpty()) {
            AssertionError failure = new AssertionError("a step the browser test asked for failed:\n" + log);
            stepFailures.forEach(failure::addSuppressed);
            throw failure;
        }
        assertEquals(0, process.exitValue(), () -> "the browser test failed:\n" + log);
    }

    /** Copies the script's output line by line, running the steps it asks for and answering each on its stdin. */
    private static Thread follow(
            InputStream in,
            OutputStream answers,
            ByteArrayOutputStream out,
            Map<String, Step> steps,
            List<Throwable> failures) {
        Thread thread = new Thread(
                () -> {
                    try (BufferedReader lines = new BufferedReader(new InputStreamReader(in, StandardCharsets.UTF_8));
                            answers) {
                        String line;
                        while ((line = lines.readLine()) != null) {
                            out.write((line + "\n").getBytes(StandardCharsets.UTF_8));
                            if (!line.startsWith("STEP ")) {
                                continue;
                            }
                            String name = line.substring("STEP ".length()).trim();
                            String answer;
                            try {
                                Step step = steps.get(name);
                                if (step == null) {
                                    throw new IllegalArgumentException(
                                            "no step '" + name + "'; known: " + steps.keySet());
                                }
                                answer = step.run();
                            } catch (Exception | AssertionError e) {
                                failures.add(e);
                                answer =
                                        "FAIL " + String.valueOf(e.getMessage()).replace('\n', ' ');
                            }
                            out.write(("  -> " + answer + "\n").getBytes(StandardCharsets.UTF_8));
                            answers.write((answer + "\n").getBytes(StandardCharsets.UTF_8));
                            answers.flush();
                        }
                    } catch (IOException e) {
                        // the process went away; what was read is kept
                    }
                },
                "browser-test-steps");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    private static Thread drain(InputStream in, ByteArrayOutputStream out) {
        Thread thread = new Thread(
                () -> {
                    try (in) {
                        in.transferTo(out);
                    } catch (IOException e) {
                        // the process went away; what was read is kept
                    }
                },
                "browser-test-output");
        thread.setDaemon(true);
        thread.start();
        return thread;
    }

    /** The path of a {@code node} of version 20 or later ($NODE, else on the PATH), or null. */
    private static String findNode() {
        List<String> candidates = new ArrayList<>();
        String explicit = System.getenv("NODE");
        if (explicit != null && !explicit.isBlank()) {
            candidates.add(explicit);
        }
        String path = System.getenv("PATH");
        if (path != null) {
            for (String dir : path.split(File.pathSeparator)) {
                if (!dir.isBlank()) {
                    candidates.add(Path.of(dir, "node").toString());
                }
            }
        }
        for (String candidate : candidates) {
            if (!Files.isExecutable(Path.of(candidate))) {
                continue;
            }
            try {
                Process version = new ProcessBuilder(candidate, "--version")
                        .redirectErrorStream(true)
                        .start();
                String text = new String(version.getInputStream().readAllBytes(), StandardCharsets.UTF_8).trim();
                if (version.waitFor(10, TimeUnit.SECONDS) && version.exitValue() == 0 && text.matches("v\\d+\\..*")) {
                    int major = Integer.parseInt(text.substring(1, text.indexOf('.')));
                    if (major >= 20) {
                        return candidate;
                    }
                }
            } catch (InterruptedException e) {
                Thread.currentThread().interrupt();
                return null;
            } catch (IOException | NumberFormatException e) {
                // not a usable node; try the next one
            }
        }
        return null;
    }

    private static String envOr(String name, String fallback) {
        String value = System.getenv(name);
        return value == null || value.isBlank() ? fallback : value;
    }
}
