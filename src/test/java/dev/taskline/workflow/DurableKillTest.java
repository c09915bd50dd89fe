package dev.taskline.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.ChildNode;
import dev.taskline.testing.ChildNodeTest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.List;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Black-box: a node running a durable handler is killed with SIGKILL and started again on the same
 * data. A step whose result was journaled before the kill never runs again; a step killed before
 * its journal write runs again (at least once, as the README says); a signal sent while the node
 * held the task is delivered after the restart. Effects are lines the steps append to a file.
 */
class DurableKillTest extends ChildNodeTest {

    private static final String CONFIG = """
      {"queues":{"default":{"slots":4,"leaseMs":1500,"heartbeatMs":300}},
       "recovery":{"intervalMs":200}}
      """;

    private JsonObject submit(ChildNode node, JsonArray ops, Path effects) {
        JsonObject payload = new JsonObject().put("ops", ops).put("effects", effects.toString());
        HttpResponse<String> answer = node.post(
                "/api/tasks",
                new JsonObject()
                        .put("type", "steps-probe")
                        .put("payload", payload)
                        .put("maxAttempts", 5));
        assertEquals(202, answer.statusCode(), answer::body);
        return new JsonObject(answer.body());
    }

    private static JsonObject poll(ChildNode node, String id, Predicate<JsonObject> done, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(120);
        JsonObject task = null;
        while (System.nanoTime() < deadline) {
            task = node.getJson("/api/tasks/" + id);
            if (done.test(task)) {
                return task;
            }
            pause(20);
        }
        throw new AssertionError("not reached: " + what + "; last: " + task + "\n--- log ---\n" + node.log());
    }

    private static long count(Path effects, String line) throws Exception {
        return Files.readAllLines(effects).stream().filter(line::equals).count();
    }

    private static List<String> steps(JsonObject task) {
        return task.getJsonArray("steps").stream()
                .map(s -> ((JsonObject) s).getString("name"))
                .toList();
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void a_step_journaled_before_the_kill_never_runs_again_and_one_killed_inside_runs_again() throws Exception {
        Map<String, String> env = childEnv(CONFIG);
        Path effects = tmp.resolve("effects.txt");
        ChildNode first = startChild("node1", env);
        // a is journaled, then the handler holds between steps; b holds inside its code, after its effect.
        String between = submit(
                        first,
                        new JsonArray()
                                .add(new JsonObject().put("step", "a"))
                                .add(new JsonObject().put("holdMs", 60_000))
                                .add(new JsonObject().put("step", "b")),
                        effects)
                .getString("id");
        String inside = submit(
                        first,
                        new JsonArray()
                                .add(new JsonObject().put("step", "a"))
                                .add(new JsonObject().put("step", "b").put("holdMs", 60_000))
                                .add(new JsonObject().put("step", "c")),
                        effects)
                .getString("id");
        poll(first, between, t -> steps(t).equals(List.of("a")), "step a journaled");
        poll(first, inside, t -> steps(t).equals(List.of("a")), "step a journaled");
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (count(effects, inside + ":b") == 0 && System.nanoTime() < deadline) {
            pause(20);
        }
        assertEquals(1, count(effects, inside + ":b"), "b's effect happened, its result not yet journaled");
        first.kill(Duration.ofSeconds(30));

        ChildNode second = startChild("node2", env);
        JsonObject one = poll(second, between, t -> TERMINAL.contains(t.getString("state")), "ended");
        JsonObject two = poll(second, inside, t -> TERMINAL.contains(t.getString("state")), "ended");
        assertEquals("succeeded", one.getString("state"), one::encode);
        assertEquals("succeeded", two.getString("state"), two::encode);
        assertEquals(1, count(effects, between + ":a"), "journaled before the kill: not run again");
        assertEquals(1, count(effects, between + ":b"));
        assertEquals(1, count(effects, inside + ":a"));
        assertEquals(2, count(effects, inside + ":b"), "killed inside its code: run again");
        assertEquals(1, count(effects, inside + ":c"));
        assertEquals(List.of("a", "b", "c"), steps(two));
        assertEquals(2, two.getJsonArray("steps").getJsonObject(1).getInteger("attempt"));
        second.stop(Duration.ofSeconds(60));
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void a_signal_sent_while_the_node_holding_the_task_is_killed_is_delivered_after_the_restart() throws Exception {
        Map<String, String> env = childEnv(CONFIG);
        Path effects = tmp.resolve("effects.txt");
        ChildNode first = startChild("node1", env);
        String id = submit(
                        first,
                        new JsonArray()
                                .add(new JsonObject().put("step", "a"))
                                .add(new JsonObject().put("holdMs", 60_000))
                                .add(new JsonObject().put("signal", "go").put("timeoutMs", 600_000)),
                        effects)
                .getString("id");
        poll(first, id, t -> steps(t).equals(List.of("a")), "step a journaled");
        HttpResponse<String> sent = first.post(
                "/api/tasks/" + id + "/signals/go", new JsonObject().put("payload", new JsonObject().put("n", 1)));
        assertEquals(202, sent.statusCode(), sent::body);
        first.kill(Duration.ofSeconds(30));

        ChildNode second = startChild("node2", env);
        JsonObject done = poll(second, id, t -> TERMINAL.contains(t.getString("state")), "ended");
        assertEquals("succeeded", done.getString("state"), done::encode);
        assertEquals(
                1,
                done.getJsonObject("result")
                        .getJsonObject("results")
                        .getJsonObject("go")
                        .getInteger("n"));
        assertEquals(1, count(effects, id + ":a"));
        assertTrue(steps(done).contains("go"));
        second.stop(Duration.ofSeconds(60));
    }

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void the_python_order_workflow_goes_on_after_its_node_is_killed_while_it_waits() throws Exception {
        org.junit.jupiter.api.Assumptions.assumeTrue(
                python() || System.getenv("CI") != null, "python3 is not installed here");
        Map<String, String> env = childEnv("""
                {"queues":{"default":{"slots":2},"orders":{"remote":true,"slots":4,"leaseMs":1500,"heartbeatMs":300}},
                 "recovery":{"intervalMs":200}}
                """);
        Path effects = tmp.resolve("effects.jsonl");
        ChildNode first = startChild("node1", env);
        JsonObject order = new JsonObject()
                .put("type", "order")
                .put("queue", "orders")
                .put("payload", new JsonObject().put("orderId", "o-1").put("amount", 5));
        HttpResponse<String> accepted = first.post("/api/tasks", order);
        assertEquals(202, accepted.statusCode(), accepted::body);
        String id = new JsonObject(accepted.body()).getString("id");
        Process worker = orderWorker(first, effects, "w-1");
        try {
            poll(first, id, t -> t.getValue("wait") != null, "the order waits for its payment");
            first.kill(Duration.ofSeconds(30));
        } finally {
            worker.destroy();
        }
        ChildNode second = startChild("node2", env);
        HttpResponse<String> paid = second.post(
                "/api/tasks/" + id + "/signals/payment",
                new JsonObject().put("payload", new JsonObject().put("paid", true)));
        assertEquals(202, paid.statusCode(), paid::body);
        Process again = orderWorker(second, effects, "w-2");
        try {
            JsonObject done = poll(second, id, t -> TERMINAL.contains(t.getString("state")), "ended");
            assertEquals("succeeded", done.getString("state"), done::encode);
            assertEquals(List.of("reserve", "payment", "charge", "ship", "email"), steps(done));
            List<String> made = Files.readAllLines(effects).stream()
                    .map(line -> new JsonObject(line).getString("effect"))
                    .sorted()
                    .toList();
            assertEquals(List.of("charge", "email", "reserve", "ship"), made, "each effect once");
        } finally {
            again.destroy();
        }
        second.stop(Duration.ofSeconds(60));
    }

    private Process orderWorker(ChildNode node, Path effects, String name) throws java.io.IOException {
        return new ProcessBuilder(
                        "python3",
                        "examples/python-worker/order.py",
                        "--url",
                        "http://127.0.0.1:" + node.port(),
                        "--queue",
                        "orders",
                        "--worker",
                        name,
                        "--effects",
                        effects.toString())
                .redirectErrorStream(true)
                .redirectOutput(tmp.resolve(name + ".log").toFile())
                .start();
    }

    private static boolean python() {
        try {
            return new ProcessBuilder("python3", "--version").start().waitFor(10, TimeUnit.SECONDS);
        } catch (java.io.IOException | InterruptedException e) {
            return false;
        }
    }
}
