package dev.taskline.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.ChildNode;
import dev.taskline.testing.ChildNodeTest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.http.HttpResponse;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.TimeUnit;
import java.util.function.Predicate;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.Timeout;

/**
 * Black-box: a node is killed with SIGKILL while a chord of 1,000 members is half done, and started
 * again on the same data. The chord's {@code then} runs once, after every member, and sees all
 * 1,000 results: no child is left blocked by a crash between a parent's end and its own release,
 * since both are one transaction.
 */
class FlowKillTest extends ChildNodeTest {

    private static final String CONFIG = """
      {"queues":{"default":{"slots":8,"capacity":2000,"leaseMs":1500,"heartbeatMs":300}},
       "recovery":{"intervalMs":200}}
      """;
    private static final int MEMBERS = 1_000;

    @Test
    @Timeout(value = 4, unit = TimeUnit.MINUTES)
    void the_then_of_a_chord_killed_half_way_runs_once_and_sees_every_result() throws Exception {
        Map<String, String> env = childEnv(CONFIG);
        ChildNode first = startChild("node1", env);
        JsonArray group = new JsonArray();
        for (int i = 0; i < MEMBERS; i++) {
            group.add(new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 20)));
        }
        JsonObject body = new JsonObject()
                .put(
                        "chord",
                        new JsonObject()
                                .put("group", group)
                                .put(
                                        "then",
                                        new JsonObject()
                                                .put("type", "rank")
                                                .put("payload", new JsonObject().put("by", "sleptMs"))));
        HttpResponse<String> answer = first.post("/api/flows", body);
        assertEquals(202, answer.statusCode(), answer::body);
        String flowId = new JsonObject(answer.body()).getString("flowId");

        JsonObject half = poll(
                first,
                flowId,
                flow -> flow.getJsonObject("counts").getInteger("succeeded") >= MEMBERS / 2,
                "half of the members succeeded");
        first.kill(Duration.ofSeconds(30));
        int before = half.getJsonObject("counts").getInteger("succeeded");
        assertTrue(before < MEMBERS, "killed before the chord was done: " + before);

        ChildNode second = startChild("node2", env);
        JsonObject flow =
                poll(second, flowId, f -> !"running".equals(f.getString("state")), "the flow ended after the restart");
        assertEquals("succeeded", flow.getString("state"), flow::encode);
        // The view pages its tasks (a thousand at most): the then, the last, is on the second page.
        JsonObject page = second.getJson(flow.getString("nextUrl"));
        JsonObject then = page.getJsonArray("tasks").getJsonObject(0);
        assertEquals("then", then.getString("key"));
        JsonObject task = second.getJson("/api/tasks/" + then.getString("id"));
        assertEquals(
                MEMBERS,
                task.getJsonObject("result").getJsonArray("ranking").size(),
                "the then task saw every member's result");
        long succeeded = events(task).stream()
                .filter(e -> "succeeded".equals(e.getString("reason")))
                .count();
        long unblocked = events(task).stream()
                .filter(e -> "unblocked".equals(e.getString("reason")))
                .count();
        assertEquals(1, succeeded, task::encode);
        assertEquals(1, unblocked, task::encode);
        second.stop(Duration.ofSeconds(60));
    }

    private static JsonObject poll(ChildNode node, String flowId, Predicate<JsonObject> done, String what) {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(150);
        JsonObject flow = null;
        while (System.nanoTime() < deadline) {
            flow = node.getJson("/api/flows/" + flowId);
            if (done.test(flow)) {
                return flow;
            }
            pause(20);
        }
        throw new AssertionError("not reached: " + what + "; last: "
                + (flow == null ? null : flow.getJsonObject("counts")) + "\n--- log ---\n" + node.log());
    }
}
