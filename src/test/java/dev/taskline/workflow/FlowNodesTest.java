package dev.taskline.workflow;

import static dev.taskline.testing.TestNode.queueIn;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** Two nodes on one journal: a flow's tasks run on both, and each child leaves blocked once. */
class FlowNodesTest {

    // Recovery runs only when a test says: a node's own timed pass could page in and start a task
    // the other node was meant to hold (see KeyedConcurrencyTest).
    private static final String CONFIG = """
        {"queues": {"default": {"slots": 2, "capacity": 1000, "leaseMs": 1000, "heartbeatMs": 200}},
         "recovery": {"intervalMs": 3600000}}
        """;

    @Test
    void a_flow_whose_tasks_run_on_two_nodes_runs_each_once_and_starts_each_child_once() throws Exception {
        String db = TestPostgres.newDatabase();
        // One clock for both: with a clock each, b's started later, and a start slower than a lease
        // (a loaded machine) made b take a's live leases over as lapsed.
        MutableClock clock = new MutableClock();
        try (TestNode a = TestNode.start(db, CONFIG, clock);
                TestNode b = TestNode.start(db, CONFIG, clock)) {
            JsonArray members = new JsonArray();
            for (int i = 0; i < 24; i++) {
                members.add(new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 40)));
            }
            JsonObject body = new JsonObject()
                    .put(
                            "chain",
                            new JsonArray()
                                    .add(new JsonObject()
                                            .put(
                                                    "chord",
                                                    new JsonObject()
                                                            .put("group", members)
                                                            .put(
                                                                    "then",
                                                                    new JsonObject()
                                                                            .put("type", "rank")
                                                                            .put(
                                                                                    "payload",
                                                                                    new JsonObject()
                                                                                            .put("by", "sleptMs")))))
                                    .add(new JsonObject().put("type", "sleep")));
            HttpResponse<Buffer> answer = a.post("/api/flows", body);
            assertEquals(202, answer.statusCode(), answer.bodyAsString());
            String flowId = answer.bodyAsJsonObject().getString("flowId");
            // b learns of the waiting members from the journal, as it does of any node's tasks.
            TestNode.await(b.node.passes().recovery().runOnce());

            JsonObject flow = a.waitForFlowState(flowId, "succeeded");
            Set<String> workers = new HashSet<>();
            List<String> wrong = new ArrayList<>();
            for (Object item : flow.getJsonArray("tasks")) {
                JsonObject view = (JsonObject) item;
                JsonObject task = b.getJson("/api/tasks/" + view.getString("id"));
                long succeeded = count(task, "succeeded");
                long unblocked = count(task, "unblocked");
                long claims = count(task, "claimed");
                if (succeeded != 1
                        || claims != 1
                        || unblocked != (view.getJsonArray("dependsOn").isEmpty() ? 0 : 1)) {
                    wrong.add(view.getString("key") + ": "
                            + task.getJsonArray("history").encode());
                }
                task.getJsonArray("history").forEach(e -> {
                    String worker = ((JsonObject) e).getString("workerId");
                    if (worker != null) {
                        workers.add(worker.substring(0, worker.indexOf('/')));
                    }
                });
            }
            assertEquals(List.of(), wrong, "each task claimed once, succeeded once, a child unblocked once");
            assertEquals(2, workers.size(), "the flow's tasks ran on both nodes: " + workers);
            JsonObject rank = flow.getJsonArray("tasks").getJsonObject(24);
            assertEquals("0.then", rank.getString("key"));
            assertEquals(
                    24, rank.getJsonObject("result").getJsonArray("ranking").size(), "it saw every member");
        }
    }

    @Test
    void a_parent_taken_over_after_its_lease_lapsed_passes_on_the_result_and_the_spawn_of_the_attempt_that_committed()
            throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, CONFIG, new MutableClock());
                TestNode b = TestNode.start(db, CONFIG, new MutableClock())) {
            JsonObject body = new JsonObject()
                    .put(
                            "chain",
                            new JsonArray()
                                    .add(new JsonObject().put("key", "parent").put("type", "gate"))
                                    .add(new JsonObject().put("key", "child").put("type", "gate")));
            HttpResponse<Buffer> answer = a.post("/api/flows", body);
            assertEquals(202, answer.statusCode(), answer.bodyAsString());
            String flowId = answer.bodyAsJsonObject().getString("flowId");
            GateHandler.Call onA = GateHandler.next(TestNode.WAIT);

            // a stops renewing (its clock stands still, b's moves past the lease): b takes the parent over.
            b.clock.advance(Duration.ofSeconds(10));
            TestNode.await(b.node.passes().recovery().runOnce());
            GateHandler.Call onB = GateHandler.next(TestNode.WAIT);
            assertEquals(onA.taskId(), onB.taskId());
            // What a's stale attempt spawns is fenced with its success: neither lands.
            assertEquals("parent.0", onA.task().spawn(new JsonObject().put("type", "sleep")));
            onA.succeed(new JsonObject().put("by", "a"));
            a.until("/api/queues", q -> queueIn(q, "default").getInteger("fencedWrites") >= 1);
            onB.succeed(new JsonObject().put("by", "b"));

            GateHandler.Call child = GateHandler.next(TestNode.WAIT);
            assertEquals("b", ((JsonObject) child.task().parents().get("parent")).getString("by"));
            child.succeed(new JsonObject());
            JsonObject flow = a.waitForFlowState(flowId, "succeeded");
            assertEquals(2, flow.getInteger("size"), "the fenced attempt spawned nothing: " + flow.encode());
        }
    }

    private static long count(JsonObject task, String reason) {
        return task.getJsonArray("history").stream()
                .filter(e -> reason.equals(((JsonObject) e).getString("reason")))
                .count();
    }
}
