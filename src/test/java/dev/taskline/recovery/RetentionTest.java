package dev.taskline.recovery;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Retention deletes finished tasks older than its time to live with their history, and nothing
 * else: not a younger finished task, not an old task that has not finished. It finds them by id
 * (time-ordered), as the journal keeps no index on finished_at.
 */
class RetentionTest {

    @Test
    void finished_tasks_past_their_time_to_live_go_with_their_history_and_nothing_else_does() throws Exception {
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(
                TestPostgres.newDatabase(),
                "{\"queues\": {\"default\": {\"slots\": 2}}, \"retention\": {\"finishedTaskTtlMs\": 3600000}}",
                clock)) {
            String old = submit(node, new JsonObject().put("type", "sleep"));
            node.waitForState(old, "succeeded");
            // Made now, due long after the cut-off: old by its id, but not finished.
            String waiting = submit(node, new JsonObject().put("type", "sleep").put("delayMs", 86_400_000L));
            clock.advance(Duration.ofMinutes(90));
            String young = submit(node, new JsonObject().put("type", "sleep"));
            node.waitForState(young, "succeeded");

            assertEquals(
                    1, TestNode.await(node.node.passes().recovery().cleanOnce()), "the finished task past 60 minutes");
            assertEquals(404, node.get("/api/tasks/" + old).statusCode());
            assertEquals("pending", node.getJson("/api/tasks/" + waiting).getString("state"));
            assertEquals("succeeded", node.getJson("/api/tasks/" + young).getString("state"));
            assertEquals(0, TestNode.await(node.node.passes().recovery().cleanOnce()), "nothing more is old enough");

            clock.advance(Duration.ofMinutes(90));
            assertEquals(1, TestNode.await(node.node.passes().recovery().cleanOnce()), "now the younger one too");
            assertEquals(404, node.get("/api/tasks/" + young).statusCode());
            assertEquals("pending", node.getJson("/api/tasks/" + waiting).getString("state"));
        }
    }

    private static String submit(TestNode node, JsonObject task) throws Exception {
        return node.post("/api/tasks", task).bodyAsJsonObject().getString("id");
    }
}
