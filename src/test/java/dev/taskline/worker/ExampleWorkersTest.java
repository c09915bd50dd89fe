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
  void the_example_node_worker_completes_good_tasks_in_a_batch_and_fails_a_bad_one() throws Exception {
    Assumptions.assumeTrue(installed("node") || System.getenv("CI") != null, "node is not installed here");
    runs("node", "examples/node-worker/worker.mjs");
  }

  private static void runs(String runtime, String script) throws Exception {
    try (TestNode node = TestNode.start(TestPostgres.newDatabase(),
        "{\"queues\": {\"python\": {\"remote\": true, \"slots\": 4}}}")) {
      List<String> good = new ArrayList<>();
      for (int i = 1; i <= 5; i++) {
        good.add(node.post("/api/tasks", new JsonObject().put("type", "sum").put("queue", "python")
            .put("payload", new JsonObject().put("numbers", new JsonArray().add(i).add(i * 10)))).bodyAsJsonObject()
            .getString("id"));
      }
      String bad = node.post("/api/tasks", new JsonObject().put("type", "sum").put("queue", "python")
          .put("payload", new JsonObject().put("numbers", "1, 2"))).bodyAsJsonObject().getString("id");

      Process worker = new ProcessBuilder(runtime, script,
          "--url", "http://127.0.0.1:" + node.node.httpPort(), "--queue", "python", "--worker", runtime + "-test",
          "--exit-when-idle").redirectErrorStream(true).start();
      assertTrue(worker.waitFor(TestNode.WAIT.toSeconds(), TimeUnit.SECONDS), "the worker stops once idle");
      String output = new String(worker.getInputStream().readAllBytes(), StandardCharsets.UTF_8);
      assertEquals(0, worker.exitValue(), output);

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

  private static boolean installed(String runtime) {
    try {
      return new ProcessBuilder(runtime, "--version").start().waitFor(10, TimeUnit.SECONDS);
    } catch (Exception e) {
      return false;
    }
  }
}
