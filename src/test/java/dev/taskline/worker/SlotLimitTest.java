package dev.taskline.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.OverlapHandler;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
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
        {"queues": {"default": {"slots": 4}, "matching": {"slots": 2, "capacity": 1000}}}
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
        assertEquals(
                202,
                node.post("/api/batches", new JsonObject().put("tasks", tasks)).statusCode());
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
            tasks.add(new JsonObject()
                    .put("type", "qualification-match")
                    .put("queue", "matching")
                    .put("payload", payload));
        }
        JsonObject batch =
                node.post("/api/batches", new JsonObject().put("tasks", tasks)).bodyAsJsonObject();
        int maxHandlersSeen = 0;
        JsonObject done;
        do {
            // Running counts the tasks whose end is being journaled too; their slots are free already.
            JsonObject matching = matching();
            maxHandlersSeen =
                    Math.max(maxHandlersSeen, matching.getInteger("running") - matching.getInteger("finishing"));
            done = node.getJson("/api/batches/" + batch.getString("batchId"));
        } while (done.getJsonObject("counts").getInteger("succeeded") < 5);
        assertTrue(maxHandlersSeen <= 2, "sampled handlers running " + maxHandlersSeen);

        // Each task was claimed once and ended once.
        int claims = 0;
        int ends = 0;
        for (Object t : done.getJsonArray("tasks")) {
            JsonObject task = node.getJson("/api/tasks/" + ((JsonObject) t).getString("id"));
            for (Object e : task.getJsonArray("history")) {
                JsonObject event = (JsonObject) e;
                if (event.getString("to").equals("running")) {
                    claims++;
                } else if ("running".equals(event.getString("from"))) {
                    ends++;
                }
            }
        }
        assertEquals(5, claims);
        assertEquals(5, ends);
    }

    @Test
    void short_tasks_claimed_ahead_still_run_no_more_than_the_slots_at_once() throws Exception {
        // Short handlers make the worker claim ahead and journal ends behind freed slots; the handlers
        // themselves count how many of them overlap.
        OverlapHandler.reset();
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < 100; i++) {
            tasks.add(new JsonObject()
                    .put("type", "overlap")
                    .put("queue", "matching")
                    .put("payload", new JsonObject().put("ms", 2)));
        }
        JsonObject batch =
                node.post("/api/batches", new JsonObject().put("tasks", tasks)).bodyAsJsonObject();
        node.waitForBatch(
                batch.getString("batchId"), b -> b.getJsonObject("counts").getInteger("succeeded") == 100, "all done");
        assertEquals(2, OverlapHandler.most(), "two ran together, never three");
    }

    private static void assertThrows(org.junit.jupiter.api.function.Executable executable) {
        org.junit.jupiter.api.Assertions.assertThrows(AssertionError.class, executable);
    }

    private static JsonObject matching() throws Exception {
        return matchingOf(node.getJson("/api/queues"));
    }

    private static JsonObject matchingOf(JsonObject queues) {
        return queues.getJsonArray("queues").stream()
                .map(q -> (JsonObject) q)
                .filter(q -> q.getString("name").equals("matching"))
                .findFirst()
                .orElseThrow();
    }
}
