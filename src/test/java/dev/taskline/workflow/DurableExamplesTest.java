package dev.taskline.workflow;

import static dev.taskline.workflow.DurableStepsTest.stepNames;
import static dev.taskline.workflow.DurableStepsTest.submit;
import static dev.taskline.workflow.DurableStepsTest.waiting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/**
 * The durable examples as a user runs them beside a node: the Python order workflow (signal after
 * and before the wait, a payment that never comes on the node's clock, a declined card, a
 * compensating cancel) and the Node onboarding function started by an event. Each simulated effect
 * is a line in a file; every one must happen exactly once.
 */
class DurableExamplesTest {

    @TempDir
    Path tmp;

    private final List<Process> workers = new ArrayList<>();

    @AfterEach
    void stopWorkers() {
        workers.forEach(Process::destroy);
    }

    private static boolean installed(String command) {
        try {
            return new ProcessBuilder(command, "--version").start().waitFor(10, TimeUnit.SECONDS);
        } catch (IOException | InterruptedException e) {
            return false;
        }
    }

    private Process worker(TestNode node, Path log, String... command) throws IOException {
        List<String> args = new ArrayList<>(List.of(command));
        args.addAll(List.of("--url", "http://127.0.0.1:" + node.node.httpPort()));
        Process process = new ProcessBuilder(args)
                .redirectErrorStream(true)
                .redirectOutput(log.toFile())
                .start();
        workers.add(process);
        return process;
    }

    /** The effects made for {@code task}, each with how many times it was made. */
    private static Map<String, Integer> effects(Path file, String task) throws IOException {
        Map<String, Integer> made = new TreeMap<>();
        if (!Files.exists(file)) {
            return made;
        }
        for (String line : Files.readAllLines(file)) {
            JsonObject effect = new JsonObject(line);
            if (task.equals(effect.getString("task"))) {
                made.merge(effect.getString("effect"), 1, Integer::sum);
            }
        }
        return made;
    }

    private static Map<String, Integer> once(String... effects) {
        Map<String, Integer> made = new TreeMap<>();
        for (String effect : effects) {
            made.put(effect, 1);
        }
        return made;
    }

    private static JsonObject order(String id, boolean declined) {
        JsonObject payload = new JsonObject()
                .put("orderId", id)
                .put("items", new JsonArray().add("book"))
                .put("amount", 12);
        if (declined) {
            payload.put("failCharge", true);
        }
        return new JsonObject().put("type", "order").put("queue", "orders").put("payload", payload);
    }

    @Test
    void the_python_order_workflow_ships_paid_orders_and_undoes_the_others_each_effect_once() throws Exception {
        Assumptions.assumeTrue(installed("python3") || System.getenv("CI") != null, "python3 is not installed here");
        Path effects = tmp.resolve("effects.jsonl");
        try (TestNode node = TestNode.start(
                TestPostgres.newDatabase(),
                "{\"queues\": {\"orders\": {\"remote\": true, \"slots\": 8}}}",
                new MutableClock())) {
            String paid = submit(node, order("o-paid", false));
            String early = submit(node, order("o-early", false));
            String late = submit(node, order("o-late", false));
            String cancelled = submit(node, order("o-cancel", false));
            String declined = submit(node, order("o-declined", true));
            // Sent before any worker ran the task: kept for its wait.
            JsonObject payment = new JsonObject().put("payload", new JsonObject().put("paid", true));
            assertEquals(
                    202,
                    node.post("/api/tasks/" + early + "/signals/payment", payment)
                            .statusCode());
            Path log = tmp.resolve("worker.log");
            worker(
                    node,
                    log,
                    "python3",
                    "examples/python-worker/order.py",
                    "--queue",
                    "orders",
                    "--effects",
                    effects.toString());

            for (String id : List.of(paid, late, cancelled, declined)) {
                assertEquals("payment", waiting(node, id).getJsonObject("wait").getString("name"));
            }
            assertEquals(
                    202,
                    node.post("/api/tasks/" + paid + "/signals/payment", payment)
                            .statusCode());
            assertEquals(
                    202,
                    node.post("/api/tasks/" + declined + "/signals/payment", payment)
                            .statusCode());
            assertEquals(
                    202,
                    node.post("/api/tasks/" + cancelled + "/cancel", new JsonObject().put("compensate", true))
                            .statusCode());
            node.waitForState(paid, "succeeded");
            node.waitForState(declined, "failed");
            node.wake(Duration.ofMinutes(30));

            JsonObject shipped = node.waitForState(paid, "succeeded");
            assertEquals("shipped", shipped.getJsonObject("result").getString("status"), Files.readString(log));
            assertEquals(
                    "shipped",
                    node.waitForState(early, "succeeded")
                            .getJsonObject("result")
                            .getString("status"));
            JsonObject timedOut = node.waitForState(late, "failed");
            assertTrue(timedOut.getJsonObject("error").getString("message").contains("no payment"), timedOut.encode());
            JsonObject undone = node.waitForState(cancelled, "cancelled");
            assertEquals(List.of("reserve", "release"), stepNames(undone));

            assertEquals(once("reserve", "charge", "ship", "email"), effects(effects, paid), Files.readString(log));
            assertEquals(once("reserve", "charge", "ship", "email"), effects(effects, early));
            assertEquals(once("reserve", "release"), effects(effects, late));
            assertEquals(once("reserve", "release"), effects(effects, cancelled));
            assertEquals(once("reserve", "release"), effects(effects, declined));
        }
    }

    @Test
    void the_node_onboarding_function_started_by_an_event_mails_each_user_once_per_step() throws Exception {
        Assumptions.assumeTrue(installed("node") || System.getenv("CI") != null, "node is not installed here");
        Path effects = tmp.resolve("effects.jsonl");
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), """
                {"queues": {"node": {"remote": true, "slots": 8}},
                 "triggers": [{"event": "user.created", "type": "onboarding", "queue": "node",
                               "concurrencyKey": "data.userId"}]}
                """, new MutableClock())) {
            List<String> tasks = new ArrayList<>();
            for (String user : List.of("u-1", "u-2")) {
                JsonObject event = new JsonObject()
                        .put("name", "user.created")
                        .put("id", "created-" + user)
                        .put("data", new JsonObject().put("userId", user).put("email", user + "@example.com"));
                tasks.add(node.post("/api/events", event)
                        .bodyAsJsonObject()
                        .getJsonArray("started")
                        .getString(0));
            }
            Path log = tmp.resolve("worker.log");
            worker(
                    node,
                    log,
                    "node",
                    "examples/node-worker/onboarding.mjs",
                    "--queue",
                    "node",
                    "--effects",
                    effects.toString(),
                    "--day-ms",
                    "60000");
            for (String id : tasks) {
                assertEquals(
                        "user.login", waiting(node, id).getJsonObject("wait").getString("name"));
            }
            JsonObject login =
                    new JsonObject().put("name", "user.login").put("data", new JsonObject().put("userId", "u-1"));
            assertEquals(1, node.post("/api/events", login).bodyAsJsonObject().getInteger("delivered"));
            node.waitForTask(
                    tasks.get(0),
                    t -> t.getJsonObject("wait") != null
                            && "sleep".equals(t.getJsonObject("wait").getString("kind")),
                    "a sleep");
            node.wake(Duration.ofMinutes(1)); // u-2's day passes without a login
            node.waitForTask(
                    tasks.get(1),
                    t -> t.getJsonObject("wait") != null
                            && "sleep".equals(t.getJsonObject("wait").getString("kind")),
                    "a sleep");
            node.wake(Duration.ofMinutes(3));
            JsonObject one = node.waitForState(tasks.get(0), "succeeded");
            JsonObject two = node.waitForState(tasks.get(1), "succeeded");
            assertEquals(
                    List.of("welcome-mail", "first-login", "tips-mail", "wait-3-days", "survey-mail"), stepNames(one));
            assertEquals(
                    List.of("welcome-mail", "first-login", "nudge-mail", "wait-3-days", "survey-mail"), stepNames(two));
            assertEquals(
                    once("welcome-mail", "tips-mail", "survey-mail"),
                    effects(effects, tasks.get(0)),
                    Files.readString(log));
            assertEquals(once("welcome-mail", "nudge-mail", "survey-mail"), effects(effects, tasks.get(1)));
        }
    }
}
