package dev.taskline.clients;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.Taskline;
import dev.taskline.auth.ApiKeys;
import dev.taskline.config.ConfigLoader;
import dev.taskline.config.TasklineConfig;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.File;
import java.nio.charset.StandardCharsets;
import java.security.SecureRandom;
import java.time.Clock;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The client packages' own test suites (pytest for clients/python, node --test for clients/node),
 * run against a real node: this one, on the system clock (leases lapse, sleeps end and heartbeats
 * fall due in real time, as for a user), with keys, so that refusals are tested too.
 */
class ClientPackagesTest {

    static final String CONFIG = """
      {"queues": {
         "py": {"remote": true, "slots": 400, "capacity": 20000, "leaseMs": 4000, "heartbeatMs": 1000,
                "maxAttempts": 3, "backoffBaseMs": 50, "backoffCapMs": 100},
         "short": {"remote": true, "slots": 50, "capacity": 1000, "leaseMs": 1500, "heartbeatMs": 500,
                   "maxAttempts": 3, "backoffBaseMs": 50, "backoffCapMs": 100},
         "python": {"remote": true, "slots": 20, "capacity": 1000, "leaseMs": 4000, "heartbeatMs": 1000},
         "default": {"slots": 4, "capacity": 1000},
         "node": {"remote": true, "slots": 20, "capacity": 1000, "leaseMs": 4000, "heartbeatMs": 1000},
         "local": {"slots": 4, "capacity": 1000},
         "tiny": {"slots": 1, "capacity": 1}},
       "triggers": [{"event": "user.created", "type": "onboarding", "queue": "node", "concurrencyKey": "data.userId"}],
       "recovery": {"intervalMs": 200}}
      """;

    private static Vertx vertx;
    private static Taskline node;
    private static String admin;
    private static String reader;

    @BeforeAll
    static void start() throws Exception {
        SecureRandom random = new SecureRandom();
        admin = ApiKeys.newSecret(random);
        reader = ApiKeys.newSecret(random);
        JsonArray keys = new JsonArray()
                .add(new JsonObject()
                        .put("id", "admin")
                        .put("hash", ApiKeys.hash(admin))
                        .put("scopes", new JsonArray(List.of("submit", "read", "work", "admin"))))
                .add(new JsonObject()
                        .put("id", "reader")
                        .put("hash", ApiKeys.hash(reader))
                        .put("scopes", new JsonArray(List.of("read"))));
        JsonObject config = new JsonObject(CONFIG)
                .put("http", new JsonObject().put("port", 0))
                .put("auth", new JsonObject().put("keys", keys).put("maxFailuresPerMinute", 1_000_000));
        TasklineConfig parsed =
                ConfigLoader.fromJson(config.encode(), Map.of(ConfigLoader.ENV_PG_URL, TestPostgres.newDatabase()));
        vertx = Vertx.vertx();
        Clock clock = Clock.systemUTC();
        node = TestNode.await(Taskline.start(vertx, parsed, clock, new TasklineMetrics(clock), null));
    }

    @AfterAll
    static void stop() throws Exception {
        if (node != null) {
            TestNode.await(node.close());
        }
        if (vertx != null) {
            TestNode.await(vertx.close());
        }
    }

    @Test
    void the_python_package_passes_its_tests_against_this_node() throws Exception {
        Assumptions.assumeTrue(
                System.getenv("CI") != null || runs("python3", "-m", "pytest", "--version"),
                "python3 with pytest is not installed here");
        run(new File("clients/python"), "python3", "-m", "pytest", "-q", "-p", "no:cacheprovider", "tests");
    }

    @Test
    void the_node_package_passes_its_tests_against_this_node() throws Exception {
        Assumptions.assumeTrue(System.getenv("CI") != null || runs("node", "--version"), "node is not installed here");
        run(new File("clients/node"), "node", "--test", "test/");
    }

    private static void run(File dir, String... command) throws Exception {
        ProcessBuilder builder = new ProcessBuilder(command).directory(dir).redirectErrorStream(true);
        builder.environment().put("TASKLINE_URL", "http://127.0.0.1:" + node.httpPort());
        builder.environment().put("TASKLINE_KEY", admin);
        builder.environment().put("TASKLINE_READ_KEY", reader);
        builder.environment().put("PYTHONPATH", new File(dir, ".").getAbsolutePath());
        builder.environment().put("PYTHONDONTWRITEBYTECODE", "1");
        Process process = builder.start();
        // Read as it comes, lest a full pipe stall the suite; printed so that a failure shows its cause.
        String output = new String(process.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertTrue(process.waitFor(10, TimeUnit.MINUTES), "the suite ended");
        System.out.println(output);
        assertEquals(0, process.exitValue(), output);
    }

    private static boolean runs(String... command) {
        try {
            Process p = new ProcessBuilder(command).redirectErrorStream(true).start();
            p.getInputStream().readAllBytes();
            return p.waitFor(30, TimeUnit.SECONDS) && p.exitValue() == 0;
        } catch (Exception e) {
            return false;
        }
    }
}
