package dev.taskline.control;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * A node with less room than the journal has waiting pages tasks in by turns of tenants when the
 * queue's tenants take turns, and in the queue's order alone when they do not.
 */
class FairPageInTest {

    @Test
    void a_node_short_of_room_pages_in_a_quiet_tenants_task_beside_a_flood() throws Exception {
        assertTrue(quietPagedIn(""), "with turns, the quiet tenant's task is among the ten");
    }

    @Test
    void without_turns_the_flood_fills_the_room() throws Exception {
        assertFalse(quietPagedIn(", \"fairTenants\": false"), "in the queue's order, the flood came first");
    }

    /** 30 tasks of one tenant, then one of another, journaled; a node with room for 10 pages in: is the last among them? */
    private static boolean quietPagedIn(String fairness) throws Exception {
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock();
        String quiet;
        // The first node takes them all, paused so that nothing runs, and leaves them in the journal.
        try (TestNode first =
                TestNode.start(db, "{\"queues\": {\"default\": {\"capacity\": 100" + fairness + "}}}", clock)) {
            first.post("/api/queues/default/pause", new JsonObject());
            for (int i = 0; i < 30; i++) {
                submit(first, "flood");
            }
            quiet = submit(first, "quiet");
        }
        try (TestNode small =
                TestNode.start(db, "{\"queues\": {\"default\": {\"capacity\": 10" + fairness + "}}}", clock)) {
            await(small.node.passes().recovery().runOnce());
            assertEquals(10, waiting(small), "as much as fits");
            // Cancelled, the quiet task frees a place in the node's line only if the node holds it there.
            assertEquals(
                    202,
                    small.post("/api/tasks/" + quiet + "/cancel", new JsonObject())
                            .statusCode());
            return waiting(small) == 9;
        }
    }

    private static int waiting(TestNode node) throws Exception {
        return TestNode.queueIn(node.getJson("/api/queues"), "default").getInteger("waiting");
    }

    private static String submit(TestNode node, String tenant) throws Exception {
        var answer = await(node.http
                .post("/api/tasks")
                .putHeader("Content-Type", "application/json")
                .putHeader("Taskline-Tenant", tenant)
                .sendBuffer(Buffer.buffer(new JsonObject().put("type", "sleep").encode())));
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }
}
