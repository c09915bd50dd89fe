package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import java.io.ByteArrayOutputStream;
import java.io.File;
import java.io.IOException;
import java.io.InputStream;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Tag;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * The dashboard in a real browser: starts a node and runs {@code src/test/browser/dashboard.test.mjs}
 * against it (headless Debian chromium driven by playwright-core), which also checks that an event
 * stream resumed with {@code Last-Event-ID} has no gap and no duplicate.
 *
 * <p>Skipped (failed when {@code CI=true}) on a machine without {@code node} (20 or later), {@code /usr/bin/chromium}
 * (or {@code $CHROMIUM}) or {@code src/test/browser/node_modules/playwright-core} ({@code npm ci --prefix src/test/browser}), so that Java
 * and Maven alone still pass. The screenshot goes to {@code $SCREENSHOT}, else
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

  /** What the browser tests run with: the project, a node of 20 or later, Chromium; each checked with {@link #need}. */
  private record Tools(Path project, String node, Path chromium) {
  }

  private static Tools tools() {
    Path project = Path.of(System.getProperty("user.dir")).toAbsolutePath();
    String node = findNode();
    need(node != null, "node 20 or later is not installed");
    Path chromium = Path.of(envOr("CHROMIUM", "/usr/bin/chromium"));
    need(Files.isExecutable(chromium), chromium + " is missing (apt-get install chromium)");
    need(Files.isRegularFile(project.resolve("src/test/browser/node_modules/playwright-core/package.json")),
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

    Path screenshot = Path.of(envOr("SCREENSHOT", project.resolve("target/dashboard.png").toString()));
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
  void with_keys_the_dashboard_signs_in_and_a_tenant_sees_only_its_tasks() throws Exception {
    Tools tools = tools();
    java.security.SecureRandom random = new java.security.SecureRandom();
    String acme = dev.taskline.auth.ApiKeys.newSecret(random);
    String globex = dev.taskline.auth.ApiKeys.newSecret(random);
    io.vertx.core.json.JsonObject config = new io.vertx.core.json.JsonObject().put("auth", new io.vertx.core.json.JsonObject()
        .put("keys", new io.vertx.core.json.JsonArray()
            .add(key("acme", acme, "acme"))
            .add(key("globex", globex, "globex"))));
    try (TestNode taskline = TestNode.start(TestPostgres.newDatabase(), config.encode())) {
      List<String> own = submit(taskline, acme, 3);
      List<String> other = submit(taskline, globex, 2);
      String base = "http://127.0.0.1:" + taskline.node.httpPort();
      run(tools, tools.project().resolve("src/test/browser/dashboard-auth.test.mjs"), base, java.util.Map.of(
          "TL_KEY", acme, "TL_OWN", String.join(",", own), "TL_OTHER", String.join(",", other)));
    }
  }

  @Test
  @Timeout(value = 300, unit = TimeUnit.SECONDS)
  void an_expired_task_is_counted_in_its_queue_and_shown_in_the_recent_tasks() throws Exception {
    Tools tools = tools();
    dev.taskline.testing.GateHandler.reset();
    dev.taskline.testing.MutableClock clock = new dev.taskline.testing.MutableClock();
    try (TestNode taskline = TestNode.start(TestPostgres.newDatabase(),
        "{\"queues\": {\"default\": {\"slots\": 1, \"claimAhead\": 0}}}", clock)) {
      // The only slot held, a task with a deadline waits past it and expires.
      taskline.post("/api/tasks", new io.vertx.core.json.JsonObject().put("type", "gate"));
      dev.taskline.testing.GateHandler.Call holder = dev.taskline.testing.GateHandler.next(TestNode.WAIT);
      String late = taskline.post("/api/tasks", new io.vertx.core.json.JsonObject().put("type", "gate")
          .put("startWithinMs", 1000)).bodyAsJsonObject().getString("id");
      clock.advance(java.time.Duration.ofSeconds(2));
      TestNode.await(taskline.node.deadlines().runOnce());
      taskline.waitForState(late, "expired");
      String base = "http://127.0.0.1:" + taskline.node.httpPort();
      try {
        run(tools, tools.project().resolve("src/test/browser/dashboard-deadlines.test.mjs"), base,
            java.util.Map.of("TL_EXPIRED", late));
      } finally {
        holder.succeed(new io.vertx.core.json.JsonObject());
      }
    }
  }

  private static io.vertx.core.json.JsonObject key(String id, String secret, String tenant) {
    return new io.vertx.core.json.JsonObject().put("id", id).put("hash", dev.taskline.auth.ApiKeys.hash(secret))
        .put("tenant", tenant).put("scopes", new io.vertx.core.json.JsonArray().add("submit").add("read"));
  }

  private static List<String> submit(TestNode taskline, String secret, int count) throws Exception {
    List<String> ids = new ArrayList<>();
    for (int i = 0; i < count; i++) {
      ids.add(TestNode.await(taskline.http.post("/api/tasks").putHeader("Authorization", "Bearer " + secret)
          .sendJsonObject(new io.vertx.core.json.JsonObject().put("type", "sleep")
              .put("payload", new io.vertx.core.json.JsonObject().put("ms", 0))))
          .bodyAsJsonObject().getString("id"));
    }
    return ids;
  }

  /** Runs a browser script against {@code base} and fails with its output unless it passes in time. */
  private static void run(Tools tools, Path script, String base, java.util.Map<String, String> env)
      throws Exception {
    ProcessBuilder builder = new ProcessBuilder(tools.node(), script.toString(), base)
        .directory(tools.project().toFile())
        .redirectErrorStream(true);
    builder.environment().putAll(env);
    builder.environment().put("CHROMIUM", tools.chromium().toString());
    Process process = builder.start();
    ByteArrayOutputStream output = new ByteArrayOutputStream();
    Thread reader = drain(process.getInputStream(), output);
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
      throw new AssertionError("the browser test did not finish within " + SCRIPT_TIMEOUT_SECONDS + " s:\n" + log);
    }
    assertEquals(0, process.exitValue(), () -> "the browser test failed:\n" + log);
  }

  private static Thread drain(InputStream in, ByteArrayOutputStream out) {
    Thread thread = new Thread(() -> {
      try (in) {
        in.transferTo(out);
      } catch (IOException e) {
        // the process went away; what was read is kept
      }
    }, "browser-test-output");
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
        Process version = new ProcessBuilder(candidate, "--version").redirectErrorStream(true).start();
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
