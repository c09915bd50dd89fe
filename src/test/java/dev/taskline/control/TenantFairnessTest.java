package dev.taskline.control;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.Test;

/**
 * Tenants take turns at a queue's slots, over HTTP against PostgreSQL: a flood from one tenant does
 * not hold up another's next task for more than one turn; with fairness off, it does.
 */
class TenantFairnessTest {

    @Test
    void a_quiet_tenants_task_waits_at_most_one_turn_while_another_floods_the_queue() throws Exception {
        int before = floodStartsBeforeQuiet("""
        {"queues": {"default": {"slots": 1, "claimAhead": 0}}}
        """);
        // The flood's turn may not have been used yet (its first task went straight to the free slot).
        assertEquals(1, before, "one turn of the flood's, not its backlog");
    }

    @Test
    void with_fairness_off_it_waits_behind_the_whole_flood() throws Exception {
        assertEquals(19, floodStartsBeforeQuiet("""
        {"queues": {"default": {"slots": 1, "claimAhead": 0, "fairTenants": false}}}
        """));
    }

    /**
     * Twenty tasks of one tenant, the first running; then one of another: how many more of the first
     * tenant's start before it.
     */
    private static int floodStartsBeforeQuiet(String config) throws Exception {
        GateHandler.reset();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), config, new MutableClock())) {
            for (int i = 0; i < 20; i++) {
                submit(node, "flood");
            }
            GateHandler.Call first = GateHandler.next(TestNode.WAIT);
            assertEquals("flood", tenantOf(node, first));
            submit(node, "quiet");
            node.until("/api/queues", q -> TestNode.queueIn(q, "default").getInteger("waiting") == 20);
            first.succeed(new JsonObject());
            int flood = 0;
            for (; ; ) {
                GateHandler.Call next = GateHandler.next(TestNode.WAIT);
                String tenant = tenantOf(node, next);
                next.succeed(new JsonObject());
                if (tenant.equals("quiet")) {
                    return flood;
                }
                flood++;
            }
        }
    }

    private static String tenantOf(TestNode node, GateHandler.Call call) throws Exception {
        return node.getJson("/api/tasks/" + call.taskId()).getString("tenant");
    }

    private static void submit(TestNode node, String tenant) throws Exception {
        var answer = await(node.http
                .post("/api/tasks")
                .putHeader("Content-Type", "application/json")
                .putHeader("Taskline-Tenant", tenant)
                .sendBuffer(Buffer.buffer(new JsonObject().put("type", "gate").encode())));
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
    }
}
