package dev.taskline.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Never more than a queue's slots run at once on a node. */
class SlotLimitTest {

  private static TestNode node;

  @BeforeAll
  static void start() throws Exception {
    GateHandler.reset();
    node = TestNode.start(TestPostgres.newDatabase(), """
        {"queues": {"default": {"slots": 4}, "matching": {"slots": 2, "capacity": 100}}}
        """);
  }

  @AfterAll
  static void stop() throws Exception {
    node.close();
  }

  @Test
  void a_third_task_waits_until_one_of_two_slots_frees() throws Exception {
    JsonArray tasks = new JsonArray();
    for (int i = 0; i < 3; i++) {
      tasks.add(new JsonObject().put("type", "gate").put("queue", "matching"));
    }
    assertEquals(202, node.post("/api/batches", new JsonObject().put("tasks", tasks)).statusCode());
    GateHandler.Call first = GateHandler.next(TestNode.WAIT);
    GateHandler.Call second = GateHandler.next(TestNode.WAIT);
    JsonObject matching = matching();
    assertEquals(2, matching.getInteger("running"));
    assertEquals(1, matching.getInteger("waiting"));
    // While both slots are held the third must not start; a short bounded look proves nothing ran.
    assertThrows(() -> GateHandler.next(Duration.ofMillis(300)));

    first.succeed(new JsonObject());
    GateHandler.Call third = GateHandler.next(TestNode.WAIT);
    second.succeed(new JsonObject());
    third.succeed(new JsonObject());
    node.until("/api/queues", q -> matchingOf(q).getInteger("finished") == 3);
  }

  @Test
  void five_matches_on_two_slots_never_run_more_than_two_at_once() throws Exception {
    JsonArray tasks = new JsonArray();
    for (int i = 0; i < 5; i++) {
      JsonObject payload = new JsonObject()
          .put("company", new JsonObject().put("name", "Acme").put("qualifications", new JsonArray()))
          .put("project", new JsonObject().put("name", "P" + i).put("requirements", new JsonArray()))
          .put("simulateMs", 150);
      tasks.add(new JsonObject().put("type", "qualification-match").put("queue", "matching").put("payload", payload));
    }
    JsonObject batch = node.post("/api/batches", new JsonObject().put("tasks", tasks)).bodyAsJsonObject();
    int maxRunningSeen = 0;
    JsonObject done;
    do {
      maxRunningSeen = Math.max(maxRunningSeen, matching().getInteger("running"));
      done = node.getJson("/api/batches/" + batch.getString("batchId"));
    } while (done.getJsonObject("counts").getInteger("succeeded") < 5);
    assertTrue(maxRunningSeen <= 2, "sampled running " + maxRunningSeen);

    // The journal tells the whole story: replay claims (+1) and finishes (-1) in commit order.
    // A slot is reused only after the finish that freed it has committed, so the replay is exact.
    List<long[]> events = new ArrayList<>();
    for (Object t : done.getJsonArray("tasks")) {
      JsonObject task = node.getJson("/api/tasks/" + ((JsonObject) t).getString("id"));
      for (Object e : task.getJsonArray("history")) {
        JsonObject event = (JsonObject) e;
        if (event.getString("to").equals("running")) {
          events.add(new long[] {event.getLong("eventId"), 1});
        } else if (event.getString("from") != null && event.getString("from").equals("running")) {
          events.add(new long[] {event.getLong("eventId"), -1});
        }
      }
    }
    events.sort(Comparator.comparingLong(e -> e[0]));
    int running = 0;
    int max = 0;
    for (long[] event : events) {
      running += (int) event[1];
      max = Math.max(max, running);
    }
    assertEquals(10, events.size());
    assertEquals(2, max, "the journal shows at most two running at once, and two did run together");
  }

  private static void assertThrows(org.junit.jupiter.api.function.Executable executable) {
    org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class, executable);
  }

  private static JsonObject matching() throws Exception {
    return matchingOf(node.getJson("/api/queues"));
  }

  private static JsonObject matchingOf(JsonObject queues) {
    return queues.getJsonArray("queues").stream().map(q -> (JsonObject) q)
        .filter(q -> q.getString("name").equals("matching")).findFirst().orElseThrow();
  }
}
