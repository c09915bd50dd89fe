package dev.taskline.workflow;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.auth.ApiKeys;
import dev.taskline.testing.GateHandler;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.security.SecureRandom;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A flow has one budget, whatever made its tasks: a spawn is held to flows.maxTasks and to the
 * flow's edge cap through every generation, to its queues' tenant limits and the tenant's share of
 * blocked tasks, and to the scopes a submission there needs. A refused spawn changes nothing: a
 * remote attempt keeps its lease, a local one fails saying why.
 */
class SpawnBudgetTest {

    private static final Map<String, String> SECRETS = new ConcurrentHashMap<>();
    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        JsonArray keys = new JsonArray();
        Map<String, JsonObject> defined = Map.of(
                "acme", key("acme", "submit", "read", "work"),
                "acme-worker", key("acme", "work"),
                "initech", key("initech", "submit", "read", "work"),
                "globex", key("globex", "submit", "read", "work"),
                "admin", key(null, "admin"));
        for (Map.Entry<String, JsonObject> e : defined.entrySet()) {
            String secret = SECRETS.computeIfAbsent(e.getKey(), k -> ApiKeys.newSecret(new SecureRandom()));
            keys.add(e.getValue().copy().put("id", e.getKey()).put("hash", ApiKeys.hash(secret)));
        }
        JsonObject queues = new JsonObject()
                .put("default", new JsonObject().put("slots", 2).put("capacity", 1000))
                .put("jobs", new JsonObject().put("slots", 1).put("capacity", 5).put("tenantLimit", 12));
        for (int i = 1; i <= 5; i++) {
            queues.put("remote" + i, new JsonObject().put("remote", true).put("capacity", 1000));
        }
        node = TestNode.start(
                TestPostgres.newDatabase(),
                new JsonObject()
                        .put("queues", queues)
                        .put("flows", new JsonObject().put("maxTasks", 50).put("maxBlocked", 800))
                        .put("http", new JsonObject().put("tenantShare", 0.25))
                        .put("auth", new JsonObject().put("keys", keys).put("maxFailuresPerMinute", 1_000_000))
                        .encode());
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    @BeforeEach
    void reset() {
        GateHandler.reset();
    }

    private static JsonObject key(String tenant, String... scopes) {
        JsonObject key = new JsonObject().put("scopes", new JsonArray(List.of((Object[]) scopes)));
        return tenant == null ? key : key.put("tenant", tenant);
    }

    private static HttpResponse<Buffer> post(String key, String path, JsonObject body) throws Exception {
        return await(node.http
                .post(path)
                .putHeader("Authorization", "Bearer " + SECRETS.get(key))
                .putHeader("Content-Type", "application/json")
                .sendBuffer(Buffer.buffer(body.encode())));
    }

    private static JsonObject get(String key, String path) throws Exception {
        HttpResponse<Buffer> answer = await(node.http
                .get(path)
                .putHeader("Authorization", "Bearer " + SECRETS.get(key))
                .send());
        assertEquals(200, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject();
    }

    private static JsonObject flow(String key, JsonObject body) throws Exception {
        HttpResponse<Buffer> answer = post(key, "/api/flows", body);
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject();
    }

    private static JsonObject task(String key, String type, String queue) {
        JsonObject task = new JsonObject().put("type", type).put("queue", queue);
        return key == null ? task : task.put("key", key);
    }

    private static JsonArray tasks(int n, String type, String queue) {
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < n; i++) {
            tasks.add(task(null, type, queue));
        }
        return tasks;
    }

    /** A root on {@code queue} and {@code children} sleeps that wait for it. */
    private static JsonObject rootAndChildren(String queue, int children, String childQueue) {
        JsonArray tasks = new JsonArray().add(task("root", "split", queue));
        for (int i = 0; i < children; i++) {
            tasks.add(task("c" + i, "sleep", childQueue).put("dependsOn", new JsonArray().add("root")));
        }
        return new JsonObject().put("tasks", tasks);
    }

    private static JsonObject claimOne(String key, String queue) throws Exception {
        JsonObject[] claimed = new JsonObject[1];
        node.until(
                () -> {
                    HttpResponse<Buffer> claim = post(
                            key,
                            "/api/queues/" + queue + "/claim",
                            new JsonObject().put("worker", "w").put("max", 1).put("waitMs", 200));
                    assertEquals(200, claim.statusCode(), claim.bodyAsString());
                    JsonArray got = claim.bodyAsJsonObject().getJsonArray("tasks");
                    claimed[0] = got.isEmpty() ? null : got.getJsonObject(0);
                    return claimed[0] != null;
                },
                () -> "nothing to claim in " + queue);
        return claimed[0];
    }

    private static HttpResponse<Buffer> complete(String key, JsonObject claimed, JsonArray spawn) throws Exception {
        return post(
                key,
                "/api/tasks/" + claimed.getString("id") + "/complete",
                new JsonObject()
                        .put("lease", claimed.getJsonObject("lease").getString("token"))
                        .put("result", new JsonObject())
                        .put("spawn", spawn));
    }

    private static void stillRunning(String key, JsonObject claimed) throws Exception {
        assertEquals(
                "running", get(key, "/api/tasks/" + claimed.getString("id")).getString("state"), "its lease is kept");
    }

    @Test
    void a_key_that_may_not_submit_cannot_spawn_and_the_attempt_keeps_its_lease() throws Exception {
        JsonObject accepted =
                flow("acme", new JsonObject().put("tasks", new JsonArray().add(task("root", "split", "remote1"))));
        JsonObject claimed = claimOne("acme-worker", "remote1");
        HttpResponse<Buffer> refused = complete("acme-worker", claimed, tasks(3, "sleep", "default"));
        assertEquals(403, refused.statusCode(), refused.bodyAsString());
        assertTrue(refused.bodyAsString().contains("submit"), refused.bodyAsString());
        stillRunning("acme", claimed);
        assertEquals(
                1, get("acme", "/api/flows/" + accepted.getString("flowId")).getInteger("size"));

        HttpResponse<Buffer> spawned = complete("acme", claimed, tasks(3, "sleep", "default"));
        assertEquals(200, spawned.statusCode(), spawned.bodyAsString());
        assertEquals(
                4, get("acme", "/api/flows/" + accepted.getString("flowId")).getInteger("size"));
    }

    @Test
    void a_flow_spawns_past_max_tasks_in_no_generation() throws Exception {
        JsonObject accepted =
                flow("acme", new JsonObject().put("tasks", new JsonArray().add(task("root", "split", "remote2"))));
        String flowId = accepted.getString("flowId");
        JsonObject root = claimOne("acme", "remote2");
        // 1 + 30: within 50. Each spawned task may spawn again, into the same budget.
        assertEquals(200, complete("acme", root, tasks(30, "split", "remote2")).statusCode());
        JsonObject child = claimOne("acme", "remote2");
        HttpResponse<Buffer> over = complete("acme", child, tasks(20, "sleep", "default"));
        assertEquals(422, over.statusCode(), over.bodyAsString());
        assertTrue(over.bodyAsString().contains("51 tasks, past flows.maxTasks (50)"), over.bodyAsString());
        stillRunning("acme", child);
        assertEquals(31, get("acme", "/api/flows/" + flowId).getInteger("size"), "nothing of it was kept");

        HttpResponse<Buffer> within = complete("acme", child, tasks(19, "sleep", "default"));
        assertEquals(200, within.statusCode(), within.bodyAsString());
        assertEquals(50, get("acme", "/api/flows/" + flowId).getInteger("size"));
    }

    @Test
    void edges_that_a_spawn_multiplies_through_its_spawner_s_dependents_are_counted() throws Exception {
        // 20 tasks wait for the root: each will wait for every spawned task too.
        JsonObject accepted = flow("acme", rootAndChildren("remote3", 20, "default"));
        String flowId = accepted.getString("flowId");
        JsonObject root = claimOne("acme", "remote3");
        // 20 + 25 + 25 x 20 = 545 edges, past 50 x 10.
        HttpResponse<Buffer> over = complete("acme", root, tasks(25, "sleep", "default"));
        assertEquals(422, over.statusCode(), over.bodyAsString());
        assertTrue(over.bodyAsString().contains("545 dependsOn edges"), over.bodyAsString());
        stillRunning("acme", root);
        assertEquals(21, get("acme", "/api/flows/" + flowId).getInteger("size"));

        // 20 + 10 + 10 x 20 = 230.
        HttpResponse<Buffer> within = complete("acme", root, tasks(10, "sleep", "default"));
        assertEquals(200, within.statusCode(), within.bodyAsString());
        assertEquals(31, get("acme", "/api/flows/" + flowId).getInteger("size"));
    }

    @Test
    void spawned_tasks_count_against_their_queue_s_tenant_limit() throws Exception {
        // Ten of acme's tasks wait blocked in jobs (tenantLimit 12).
        flow("acme", rootAndChildren("remote4", 10, "jobs"));
        JsonObject root = claimOne("acme", "remote4");
        HttpResponse<Buffer> never = complete("acme", root, tasks(13, "sleep", "jobs"));
        assertEquals(422, never.statusCode(), "more than the limit could never fit: " + never.bodyAsString());
        HttpResponse<Buffer> notNow = complete("acme", root, tasks(3, "sleep", "jobs"));
        assertEquals(429, notNow.statusCode(), "10 + 3 past 12: " + notNow.bodyAsString());
        stillRunning("acme", root);
        HttpResponse<Buffer> fits = complete("acme", root, tasks(2, "sleep", "jobs"));
        assertEquals(200, fits.statusCode(), fits.bodyAsString());
    }

    @Test
    void a_tenant_holds_at_most_its_share_of_blocked_tasks_and_another_is_served() throws Exception {
        // maxBlocked 800, tenantShare 0.25: 200 a tenant.
        // The node counts what it admitted since it last read the journal's count, and a read that
        // crosses an admission may count that flow twice until the next: at least three fit, a fifth never.
        int accepted = 0;
        HttpResponse<Buffer> refused = null;
        while (refused == null && accepted < 5) {
            HttpResponse<Buffer> answer = post("initech", "/api/flows", rootAndChildren("remote5", 49, "default"));
            if (answer.statusCode() == 202) {
                accepted++;
            } else {
                refused = answer;
            }
        }
        assertTrue(accepted >= 3 && accepted <= 4, accepted + " flows of 49 blocked tasks were accepted");
        assertEquals(429, refused.statusCode(), refused.bodyAsString());
        JsonObject problem = refused.bodyAsJsonObject();
        assertEquals("initech", problem.getString("tenant"));
        assertEquals(200, problem.getInteger("limit"));
        assertTrue(refused.getHeader("Retry-After") != null);
        // A spawn that would block more is refused the same way, and the attempt keeps its lease.
        JsonObject root = claimOne("initech", "remote5");
        HttpResponse<Buffer> spawn = complete("initech", root, tasks(49, "sleep", "default"));
        assertEquals(429, spawn.statusCode(), spawn.bodyAsString());
        stillRunning("initech", root);

        flow("globex", rootAndChildren("remote5", 49, "default"));
    }

    @Test
    void a_local_handler_whose_spawn_passes_the_budget_fails_for_good_saying_why() throws Exception {
        JsonObject accepted = flow(
                "acme",
                new JsonObject()
                        .put(
                                "tasks",
                                new JsonArray()
                                        .add(new JsonObject()
                                                .put("key", "fetch")
                                                .put("type", "gate")
                                                .put("maxAttempts", 3))));
        GateHandler.Call fetch = GateHandler.next(TestNode.WAIT);
        for (int i = 0; i < 50; i++) {
            fetch.task().spawn(new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0)));
        }
        fetch.succeed(new JsonObject());
        JsonObject[] flow = new JsonObject[1];
        node.until(
                () -> "failed"
                        .equals((flow[0] = get("acme", "/api/flows/" + accepted.getString("flowId")))
                                .getString("state")),
                () -> "the flow did not fail: " + flow[0]);
        assertEquals(1, flow[0].getInteger("size"));
        String id = flow[0].getJsonArray("tasks").getJsonObject(0).getString("id");
        JsonObject task = get("acme", "/api/tasks/" + id);
        assertEquals(1, task.getInteger("attempt"), "failed for good: the same code would spawn the same");
        assertTrue(task.getJsonObject("error").getString("message").contains("flows.maxTasks"), task.encode());
    }
}
