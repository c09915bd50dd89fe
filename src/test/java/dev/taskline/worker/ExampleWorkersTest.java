package dev.taskline.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Assumptions;
import org.junit.jupiter.api.Test;

/** The example workers, as a user would run them beside a node, run a remote queue's tasks. */
class ExampleWorkersTest {

    @Test
    void the_example_python_worker_completes_good_tasks_and_fails_a_bad_one() throws Exception {
        Assumptions.assumeTrue(installed("python3") || System.getenv("CI") != null, "python3 is not installed here");
        runs("python3", "examples/python-worker/worker.py");
    }

    @Test
    void the_example_python_worker_scores_a_qualification_match_as_the_nodes_own_handler_does() throws Exception {
        Assumptions.assumeTrue(installed("python3") || System.getenv("CI") != null, "python3 is not installed here");
        JsonObject payload = new JsonObject()
                .put(
                        "company",
                        new JsonObject()
                                .put("name", "Acme")
                                .put(
                                        "qualifications",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("name", "ISO 27001")
                                                        .put("level", 2)
                                                        .put("expires", "2027-05-01"))
                                                .add(new JsonObject()
                                                        .put("name", " iso 27001 ")
                                                        .put("level", 1))
                                                .add(new JsonObject()
                                                        .put("name", "SOC 2")
                                                        .put("level", 3)
                                                        .put("expires", "2026-01-01"))
                                                .add(new JsonObject()
                                                        .put("name", "Welding")
                                                        .put("level", 7))))
                .put(
                        "project",
                        new JsonObject()
                                .put("name", "Bridge")
                                .put(
                                        "requirements",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("name", "ISO 27001")
                                                        .put("minLevel", 3)
                                                        .put("weight", 1.5)
                                                        .put("mandatory", true))
                                                .add(new JsonObject()
                                                        .put("name", "SOC 2")
                                                        .put("weight", 0.1))
                                                .add(new JsonObject()
                                                        .put("name", "Welding")
                                                        .put("minLevel", 7)
                                                        .put("weight", 2))
                                                .add(new JsonObject()
                                                        .put("name", "Diving")
                                                        .put("minLevel", 9))))
                .put("asOf", "2026-11-29")
                .put("simulateMs", 200);
        try (TestNode node = TestNode.start(
                TestPostgres.newDatabase(),
                "{\"queues\": {\"python\": {\"remote\": true, \"slots\": 4}, \"matching\": {\"slots\": 2}}}")) {
            String remote = node.post(
                            "/api/tasks",
                            new JsonObject()
                                    .put("type", "qualification-match")
                                    .put("queue", "python")
                                    .put("payload", payload))
                    .bodyAsJsonObject()
                    .getString("id");
            String local = node.post(
                            "/api/tasks",
                            new JsonObject()
                                    .put("type", "qualification-match")
                                    .put("queue", "matching")
                                    .put("payload", payload))
                    .bodyAsJsonObject()
                    .getString("id");
            String output = runWorker(node, "python3", "examples/python-worker/worker.py");
            JsonObject byPython = node.getJson("/api/tasks/" + remote);
            JsonObject byJava = node.waitForState(local, "succeeded");
            assertEquals("succeeded", byPython.getString("state"), output);
            assertEquals(byJava.getJsonObject("result"), byPython.getJsonObject("result"));
            assertEquals(100, byPython.getJsonObject("progress").getInteger("percent"), "heart-beaten with progress");
            assertTrue(
                    byPython.getJsonArray("history").stream()
                            .anyMatch(e -> "claimed".equals(((JsonObject) e).getString("reason"))
                                    && "python3-test".equals(((JsonObject) e).getString("workerId"))),
                    byPython.encode());
        }
    }

    @Test
    void the_example_node_worker_completes_good_tasks_in_a_batch_and_fails_a_bad_one() throws Exception {
        Assumptions.assumeTrue(installed("node") || System.getenv("CI") != null, "node is not installed here");
        runs("node", "examples/node-worker/worker.mjs");
    }

    private static void runs(String runtime, String script) throws Exception {
        try (TestNode node = TestNode.start(
                TestPostgres.newDatabase(), "{\"queues\": {\"python\": {\"remote\": true, \"slots\": 4}}}")) {
            List<String> good = new ArrayList<>();
            for (int i = 1; i <= 5; i++) {
                good.add(node.post(
                                "/api/tasks",
                                new JsonObject()
                                        .put("type", "sum")
                                        .put("queue", "python")
                                        .put(
                                                "payload",
                                                new JsonObject()
                                                        .put(
                                                                "numbers",
                                                                new JsonArray()
                                                                        .add(i)
                                                                        .add(i * 10))))
                        .bodyAsJsonObject()
                        .getString("id"));
            }
            String bad = node.post(
                            "/api/tasks",
                            new JsonObject()
                                    .put("type", "sum")
                                    .put("queue", "python")
                                    .put("payload", new JsonObject().put("numbers", "1, 2")))
                    .bodyAsJsonObject()
                    .getString("id");

            String output = runWorker(node, runtime, script);

            for (int i = 1; i <= 5; i++) {
                JsonObject task = node.getJson("/api/tasks/" + good.get(i - 1));
                assertEquals("succeeded", task.getString("state"), output);
                assertEquals(11 * i, task.getJsonObject("result").getInteger("sum"));
            }
            JsonObject failed = node.getJson("/api/tasks/" + bad);
            assertEquals("failed", failed.getString("state"), output);
            assertTrue(failed.getJsonObject("error").getString("message").contains("numbers"), failed.encode());
        }
    }

    /** Runs the example worker on the node's queue "python" until a claim finds nothing; its output. */
    private static String runWorker(TestNode node, String runtime, String script) throws Exception {
        Process worker = new ProcessBuilder(
                        runtime,
                        script,
                        "--url",
                        "http://127.0.0.1:" + node.node.httpPort(),
                        "--queue",
                        "python",
                        "--worker",
                        runtime + "-test",
                        "--exit-when-idle")
                .redirectErrorStream(true)
                .start();
        assertTrue(worker.waitFor(TestNode.WAIT.toSeconds(), TimeUnit.SECONDS), "the worker stops once idle");
        String output = new String(worker.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
        assertEquals(0, worker.exitValue(), output);
        return output;
    }

    private static boolean installed(String runtime) {
        try {
            return new ProcessBuilder(runtime, "--version").start().waitFor(10, TimeUnit.SECONDS);
        } catch (Exception e) {
            return false;
        }
    }
}
