package dev.taskline.workflow;

import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.SseClient;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Flows over real HTTP against a real journal: shorthands, result passing, joins, failures, retry, cancel. */
class FlowsApiTest {

    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), """
        {"queues": {"default": {"slots": 4, "capacity": 1000}, "matching": {"slots": 2, "capacity": 100},
                    "payments": {"slots": 1, "capacity": 100}, "mail": {"slots": 1, "capacity": 100},
                    "remote": {"remote": true, "capacity": 100}},
         "flows": {"maxTasks": 50, "maxParentBytes": 4096}}
        """);
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    @BeforeEach
    void reset() {
        GateHandler.reset();
    }

    private static JsonObject sleep(String key, int ms) {
        JsonObject task = new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", ms));
        return key == null ? task : task.put("key", key);
    }

    private static JsonObject gate(String key) {
        return new JsonObject().put("key", key).put("type", "gate");
    }

    /** Two gates, a and b, each with one attempt, and a task that runs on the first of them to succeed. */
    private static JsonObject firstOfTwo() {
        return new JsonObject()
                .put(
                        "tasks",
                        new JsonArray()
                                .add(gate("a").put("maxAttempts", 1))
                                .add(gate("b").put("maxAttempts", 1))
                                .add(sleep("first", 0)
                                        .put(
                                                "dependsOn",
                                                new JsonArray().add("a").add("b"))
                                        .put("join", "any")));
    }

    private static JsonObject accepted(JsonObject body) throws Exception {
        HttpResponse<Buffer> response = node.post("/api/flows", body);
        assertEquals(202, response.statusCode(), response.bodyAsString());
        JsonObject answer = response.bodyAsJsonObject();
        assertEquals("/api/flows/" + answer.getString("flowId"), response.getHeader("Location"));
        return answer;
    }

    private static Map<String, String> ids(JsonObject accepted) {
        Map<String, String> ids = new HashMap<>();
        accepted.getJsonArray("tasks")
                .forEach(t -> ids.put(((JsonObject) t).getString("key"), ((JsonObject) t).getString("id")));
        return ids;
    }

    private static JsonObject flowWhen(String flowId, String state) throws Exception {
        return node.waitForFlowState(flowId, state);
    }

    private static JsonObject taskOf(JsonObject flow, String key) {
        for (Object t : flow.getJsonArray("tasks")) {
            if (key.equals(((JsonObject) t).getString("key"))) {
                return (JsonObject) t;
            }
        }
        throw new AssertionError("no task " + key + " in " + flow.encode());
    }

    @Test
    void a_chord_of_five_matches_runs_rank_once_all_are_done_and_ranks_their_scores() throws Exception {
        JsonArray group = new JsonArray();
        int[] levels = {1, 3, 2, 5, 4};
        for (int i = 0; i < 5; i++) {
            group.add(new JsonObject()
                    .put("type", "qualification-match")
                    .put("queue", "matching")
                    .put(
                            "payload",
                            new JsonObject()
                                    .put(
                                            "company",
                                            new JsonObject()
                                                    .put("name", "Acme")
                                                    .put(
                                                            "qualifications",
                                                            new JsonArray()
                                                                    .add(new JsonObject()
                                                                            .put("name", "Java")
                                                                            .put("level", levels[i]))))
                                    .put(
                                            "project",
                                            new JsonObject()
                                                    .put("name", "P" + i)
                                                    .put(
                                                            "requirements",
                                                            new JsonArray()
                                                                    .add(new JsonObject()
                                                                            .put("name", "Java")
                                                                            .put("minLevel", 5)
                                                                            .put("weight", 1))))));
        }
        JsonObject answer = accepted(new JsonObject()
                .put("name", "rank-five")
                .put("chord", new JsonObject().put("group", group).put("then", new JsonObject().put("type", "rank"))));
        assertEquals("running", answer.getString("state"));
        List<String> keys = new ArrayList<>();
        answer.getJsonArray("tasks").forEach(t -> keys.add(((JsonObject) t).getString("key")));
        assertEquals(List.of("0", "1", "2", "3", "4", "then"), keys);
        assertEquals("blocked", answer.getJsonArray("tasks").getJsonObject(5).getString("state"));

        JsonObject flow = flowWhen(answer.getString("flowId"), "succeeded");
        assertEquals("rank-five", flow.getString("name"));
        assertEquals(6, flow.getJsonObject("counts").getInteger("succeeded"));
        JsonObject rank = taskOf(flow, "then");
        assertEquals(
                List.of("0", "1", "2", "3", "4"), rank.getJsonArray("dependsOn").getList());
        JsonArray ranking = rank.getJsonObject("result").getJsonArray("ranking");
        List<String> projects = new ArrayList<>();
        ranking.forEach(line -> projects.add(((JsonObject) line).getString("project")));
        // Level 5 meets the requirement in full; each level below it scores less.
        assertEquals(List.of("P3", "P4", "P1", "P2", "P0"), projects);
        JsonObject thenTask = node.getJson("/api/tasks/" + rank.getString("id"));
        assertEquals(answer.getString("flowId"), thenTask.getString("flowId"));
        assertEquals("then", thenTask.getString("flowKey"));
        assertEquals(List.of("submitted", "unblocked", "claimed", "succeeded"), reasons(thenTask));
        assertEquals(
                "blocked", thenTask.getJsonArray("history").getJsonObject(0).getString("to"));
    }

    @Test
    void each_step_of_a_chain_on_its_own_queue_starts_after_the_one_before_and_reads_its_result() throws Exception {
        JsonObject answer = accepted(new JsonObject()
                .put(
                        "chain",
                        new JsonArray()
                                .add(sleep("pay", 0).put("queue", "payments"))
                                .add(gate("invoice"))
                                .add(sleep("email", 0).put("queue", "mail"))));
        Map<String, String> ids = ids(answer);
        GateHandler.Call invoice = GateHandler.next(TestNode.WAIT);
        assertEquals(ids.get("invoice"), invoice.taskId().toString());
        Map<String, Object> parents = invoice.task().parents();
        assertEquals(List.of("pay"), List.copyOf(parents.keySet()));
        assertEquals(0, ((JsonObject) parents.get("pay")).getInteger("sleptMs"));
        assertEquals("succeeded", invoice.task().parentStates().get("pay"));
        JsonObject midway = node.getJson("/api/flows/" + answer.getString("flowId"));
        assertEquals("blocked", taskOf(midway, "email").getString("state"));
        invoice.succeed(new JsonObject().put("invoice", "INV-1"));
        JsonObject flow = flowWhen(answer.getString("flowId"), "succeeded");
        assertEquals(
                List.of("invoice"),
                taskOf(flow, "email").getJsonArray("dependsOn").getList());
        assertEquals(
                1.0,
                node.metric("taskline_flow_fan_in_seconds_count{queue=\"mail\"}"),
                "the email's start from its release is timed");
        assertEquals(
                0.0,
                node.metric("taskline_flow_fan_in_seconds_count{queue=\"payments\"}"),
                "a root waits for no parent");
    }

    @Test
    void a_failed_parent_cancels_its_dependents_transitively_and_a_settled_join_still_runs() throws Exception {
        JsonObject answer = accepted(new JsonObject()
                .put(
                        "tasks",
                        new JsonArray()
                                .add(gate("pay").put("maxAttempts", 1))
                                .add(sleep("invoice", 0).put("dependsOn", new JsonArray().add("pay")))
                                .add(sleep("email", 0).put("dependsOn", new JsonArray().add("invoice")))
                                .add(gate("audit")
                                        .put("dependsOn", new JsonArray().add("pay"))
                                        .put("join", "settled"))));
        String flowId = answer.getString("flowId");
        GateHandler.next(TestNode.WAIT).fail("card declined");
        GateHandler.Call audit = GateHandler.next(TestNode.WAIT);
        assertEquals("failed", audit.task().parentStates().get("pay"));
        assertEquals("card declined", ((JsonObject) audit.task().parents().get("pay")).getString("message"));
        audit.succeed(new JsonObject());
        JsonObject flow = flowWhen(flowId, "failed");
        assertEquals("failed", taskOf(flow, "pay").getString("state"));
        assertEquals("cancelled", taskOf(flow, "invoice").getString("state"));
        assertEquals("cancelled", taskOf(flow, "email").getString("state"));
        assertEquals("succeeded", taskOf(flow, "audit").getString("state"));
        JsonObject email = node.getJson("/api/tasks/" + taskOf(flow, "email").getString("id"));
        assertEquals(List.of("submitted", "parent_failed"), reasons(email));
    }

    @Test
    void a_retry_of_the_flow_resumes_from_the_step_that_failed() throws Exception {
        JsonObject answer = accepted(new JsonObject()
                .put(
                        "chain",
                        new JsonArray()
                                .add(sleep("pay", 0))
                                .add(gate("invoice").put("maxAttempts", 1))
                                .add(sleep("email", 0))));
        String flowId = answer.getString("flowId");
        GateHandler.next(TestNode.WAIT).fail("printer on fire");
        JsonObject failed = flowWhen(flowId, "failed");
        assertEquals("cancelled", taskOf(failed, "email").getString("state"));

        HttpResponse<Buffer> retried = node.post("/api/flows/" + flowId + "/retry", new JsonObject());
        assertEquals(202, retried.statusCode(), retried.bodyAsString());
        assertEquals(1, retried.bodyAsJsonObject().getJsonArray("retried").size());
        GateHandler.Call again = GateHandler.next(TestNode.WAIT);
        JsonObject resumed = node.getJson("/api/flows/" + flowId);
        assertEquals("running", resumed.getString("state"));
        assertEquals("blocked", taskOf(resumed, "email").getString("state"));
        assertEquals("succeeded", taskOf(resumed, "pay").getString("state"));
        assertEquals(1, taskOf(resumed, "pay").getInteger("attempt"), "pay is not run again");
        again.succeed(new JsonObject());
        JsonObject flow = flowWhen(flowId, "succeeded");
        JsonObject email = node.getJson("/api/tasks/" + taskOf(flow, "email").getString("id"));
        assertEquals(
                List.of("submitted", "parent_failed", "retried", "unblocked", "claimed", "succeeded"), reasons(email));
    }

    @Test
    void a_join_of_any_runs_on_the_first_success_and_is_cancelled_only_when_every_parent_failed() throws Exception {
        JsonObject answer = accepted(firstOfTwo());
        Map<String, String> ids = ids(answer);
        GateHandler.Call one = GateHandler.next(TestNode.WAIT);
        GateHandler.Call two = GateHandler.next(TestNode.WAIT);
        GateHandler.Call a = one.taskId().toString().equals(ids.get("a")) ? one : two;
        GateHandler.Call b = a == one ? two : one;
        a.fail("no");
        node.waitForState(ids.get("a"), "failed");
        assertEquals("blocked", node.getJson("/api/tasks/" + ids.get("first")).getString("state"));
        b.succeed(new JsonObject().put("winner", "b"));
        node.waitForState(ids.get("first"), "succeeded");

        JsonObject lost = accepted(firstOfTwo());
        GateHandler.next(TestNode.WAIT).fail("no");
        GateHandler.next(TestNode.WAIT).fail("no either");
        JsonObject flow = flowWhen(lost.getString("flowId"), "failed");
        assertEquals("cancelled", taskOf(flow, "first").getString("state"));
    }

    @Test
    void a_cancel_of_the_flow_ends_every_unfinished_task_and_the_stream_ends_with_it() throws Exception {
        JsonObject answer = accepted(
                new JsonObject().put("chain", new JsonArray().add(gate("slow")).add(sleep("next", 0))));
        String flowId = answer.getString("flowId");
        GateHandler.Call slow = GateHandler.next(TestNode.WAIT);
        try (SseClient stream =
                SseClient.open(node.vertx, node.node.httpPort(), "/api/flows/" + flowId + "/events", null)) {
            HttpResponse<Buffer> cancelled = node.post("/api/flows/" + flowId + "/cancel", new JsonObject());
            assertEquals(202, cancelled.statusCode(), cancelled.bodyAsString());
            assertEquals(1, cancelled.bodyAsJsonObject().getInteger("cancelled"));
            assertEquals(1, cancelled.bodyAsJsonObject().getInteger("cancelling"));
            assertTrue(slow.task().cancelled() || waitCancelled(slow));
            slow.succeed(new JsonObject());
            JsonObject flow = flowWhen(flowId, "cancelled");
            assertEquals(2, flow.getJsonObject("counts").getInteger("cancelled"));
            List<SseClient.Event> events = stream.untilEnd();
            assertEquals("end", events.get(events.size() - 1).event(), "the stream ends with the flow");
            assertTrue(events.stream().anyMatch(e -> "state".equals(e.event())), "it carried the flow's transitions");
        }
    }

    private static boolean waitCancelled(GateHandler.Call call) throws Exception {
        node.until(() -> call.task().cancelled(), () -> "the running task was never told to stop");
        return true;
    }

    @Test
    void an_idempotent_flow_is_journaled_once_and_its_answer_replayed() throws Exception {
        JsonObject body = new JsonObject()
                .put("chain", new JsonArray().add(sleep(null, 0)).add(sleep(null, 0)));
        HttpResponse<Buffer> first = TestNode.await(node.http
                .post("/api/flows")
                .putHeader("Idempotency-Key", "order-77")
                .sendJsonObject(body));
        HttpResponse<Buffer> second = TestNode.await(node.http
                .post("/api/flows")
                .putHeader("Idempotency-Key", "order-77")
                .sendJsonObject(body));
        assertEquals(202, first.statusCode(), first.bodyAsString());
        assertEquals(202, second.statusCode(), second.bodyAsString());
        assertEquals(
                first.bodyAsJsonObject().getString("flowId"),
                second.bodyAsJsonObject().getString("flowId"));
        assertEquals("true", second.getHeader("Idempotent-Replayed"));
        HttpResponse<Buffer> other = TestNode.await(node.http
                .post("/api/flows")
                .putHeader("Idempotency-Key", "order-77")
                .sendJsonObject(new JsonObject().put("group", new JsonArray().add(sleep(null, 0)))));
        assertEquals(409, other.statusCode(), other.bodyAsString());
    }

    @Test
    void bad_flows_are_refused_with_422_naming_the_problem_and_journal_nothing() throws Exception {
        int before = node.getJson("/api/flows?limit=1000").getJsonArray("flows").size();
        Map<String, JsonObject> bad = new HashMap<>();
        bad.put(
                "cycle: a -> b -> a",
                new JsonObject()
                        .put(
                                "tasks",
                                new JsonArray()
                                        .add(sleep("a", 0).put("dependsOn", new JsonArray().add("b")))
                                        .add(sleep("b", 0).put("dependsOn", new JsonArray().add("a")))));
        bad.put(
                "no task of the flow has key 'ghost'",
                new JsonObject()
                        .put(
                                "tasks",
                                new JsonArray().add(sleep("a", 0).put("dependsOn", new JsonArray().add("ghost")))));
        bad.put(
                "'a'",
                new JsonObject().put("tasks", new JsonArray().add(sleep("a", 0)).add(sleep("a", 0))));
        bad.put("tasks", new JsonObject().put("tasks", new JsonArray()));
        bad.put("key", new JsonObject().put("tasks", new JsonArray().add(sleep("a b", 0))));
        bad.put(
                "join",
                new JsonObject()
                        .put(
                                "tasks",
                                new JsonArray()
                                        .add(sleep("a", 0))
                                        .add(sleep("b", 0)
                                                .put("dependsOn", new JsonArray().add("a"))
                                                .put("join", "most"))));
        JsonArray many = new JsonArray();
        for (int i = 0; i < 51; i++) {
            many.add(sleep(null, 0));
        }
        bad.put("at most 50", new JsonObject().put("group", many));
        bad.put(
                "unknown task type",
                new JsonObject()
                        .put("chain", new JsonArray().add(sleep(null, 0)).add(new JsonObject().put("type", "nope"))));
        bad.put(
                "runAt",
                new JsonObject()
                        .put(
                                "chain",
                                new JsonArray()
                                        .add(sleep(null, 0))
                                        .add(sleep(null, 0).put("runAt", "2030-01-01T00:00:00Z"))));
        for (Map.Entry<String, JsonObject> entry : bad.entrySet()) {
            HttpResponse<Buffer> response = node.post("/api/flows", entry.getValue());
            assertEquals(422, response.statusCode(), entry.getKey() + ": " + response.bodyAsString());
            String detail = response.bodyAsJsonObject().getString("detail");
            assertNotNull(detail);
            assertTrue(detail.contains(entry.getKey()), "'" + detail + "' should name " + entry.getKey());
        }
        assertEquals(
                before,
                node.getJson("/api/flows?limit=1000").getJsonArray("flows").size());
    }

    @Test
    void flows_are_listed_newest_first_by_state_and_name_in_keyset_pages() throws Exception {
        String name = "listed-" + System.nanoTime();
        List<String> made = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            JsonObject answer =
                    accepted(new JsonObject().put("name", name).put("group", new JsonArray().add(sleep(null, 0))));
            made.add(0, answer.getString("flowId"));
            flowWhen(answer.getString("flowId"), "succeeded");
        }
        JsonObject page = node.getJson("/api/flows?name=" + name + "&state=succeeded&limit=2");
        assertEquals(2, page.getJsonArray("flows").size());
        assertEquals(made.get(0), page.getJsonArray("flows").getJsonObject(0).getString("id"));
        JsonObject rest = node.getJson("/api/flows?name=" + name + "&limit=2&after=" + page.getString("next"));
        assertEquals(made.get(2), rest.getJsonArray("flows").getJsonObject(0).getString("id"));
        assertEquals(404, node.get("/api/flows/" + java.util.UUID.randomUUID()).statusCode());
        assertEquals(400, node.get("/api/flows?state=blocked").statusCode());
    }

    @Test
    void a_running_task_fans_out_over_what_it_read_and_its_dependents_wait_for_all_of_it() throws Exception {
        JsonObject answer = accepted(new JsonObject()
                .put(
                        "tasks",
                        new JsonArray()
                                .add(gate("fetch"))
                                .add(new JsonObject()
                                        .put("key", "report")
                                        .put("type", "rank")
                                        .put("payload", new JsonObject().put("by", "sleptMs"))
                                        .put("dependsOn", new JsonArray().add("fetch")))));
        String flowId = answer.getString("flowId");
        GateHandler.Call fetch = GateHandler.next(TestNode.WAIT);
        List<String> keys = new ArrayList<>();
        for (int i = 1; i <= 3; i++) {
            keys.add(fetch.task().spawn(sleep(null, 0).put("payload", new JsonObject().put("ms", i))));
        }
        assertEquals(List.of("fetch.0", "fetch.1", "fetch.2"), keys);
        assertEquals(
                "by-hand", fetch.task().spawn(sleep("by-hand", 0).put("dependsOn", new JsonArray().add("fetch.2"))));
        JsonObject before = node.getJson("/api/flows/" + flowId);
        assertEquals(2, before.getJsonArray("tasks").size(), "nothing is added before the success commits");
        fetch.succeed(new JsonObject().put("items", 3));

        JsonObject flow = flowWhen(flowId, "succeeded");
        assertEquals(6, flow.getInteger("size"));
        assertEquals(
                List.of("fetch"),
                taskOf(flow, "fetch.0").getJsonArray("dependsOn").getList());
        assertEquals(
                List.of("fetch", "fetch.2"),
                taskOf(flow, "by-hand").getJsonArray("dependsOn").getList());
        // The report waited for the spawner and for every spawned task no other depends on.
        assertEquals(
                List.of("fetch", "fetch.0", "fetch.1", "by-hand"),
                taskOf(flow, "report").getJsonArray("dependsOn").getList());
        JsonArray ranking = taskOf(flow, "report").getJsonObject("result").getJsonArray("ranking");
        assertEquals(3, ranking.size(), "the three spawned sleeps that report waits for, by sleptMs");
    }

    @Test
    void a_remote_worker_reads_its_parents_in_the_claim_and_spawns_with_its_complete() throws Exception {
        JsonObject answer = accepted(new JsonObject()
                .put(
                        "chain",
                        new JsonArray()
                                .add(sleep("a", 0))
                                .add(new JsonObject()
                                        .put("key", "b")
                                        .put("type", "split")
                                        .put("queue", "remote"))));
        String flowId = answer.getString("flowId");
        JsonObject task = claimRemote("py-1", 1).getJsonObject(0);
        assertEquals(0, task.getJsonObject("parents").getJsonObject("a").getInteger("sleptMs"));
        assertEquals("succeeded", task.getJsonObject("parentStates").getString("a"));

        String lease = task.getJsonObject("lease").getString("token");
        HttpResponse<Buffer> bad = complete(task, new JsonObject().put("type", "nope"));
        assertEquals(422, bad.statusCode(), bad.bodyAsString());
        assertEquals(
                "running", node.getJson("/api/tasks/" + task.getString("id")).getString("state"));
        HttpResponse<Buffer> taken = complete(task, sleep("a", 0));
        assertEquals(422, taken.statusCode(), "a key the flow has: " + taken.bodyAsString());
        assertTrue(taken.bodyAsString().contains("already has"), taken.bodyAsString());
        assertEquals(
                "running", node.getJson("/api/tasks/" + task.getString("id")).getString("state"));

        HttpResponse<Buffer> done = node.post(
                "/api/tasks/" + task.getString("id") + "/complete",
                new JsonObject()
                        .put("lease", lease)
                        .put("result", new JsonObject().put("parts", 2))
                        .put("spawn", new JsonArray().add(sleep(null, 0)).add(sleep(null, 0))));
        assertEquals(200, done.statusCode(), done.bodyAsString());
        JsonObject flow = flowWhen(flowId, "succeeded");
        assertEquals(4, flow.getInteger("size"));
        assertEquals("succeeded", taskOf(flow, "b.1").getString("state"));
    }

    @Test
    void a_key_spawned_once_in_a_flow_cannot_be_spawned_again_by_another_task() throws Exception {
        JsonObject answer = accepted(new JsonObject()
                .put(
                        "group",
                        new JsonArray()
                                .add(new JsonObject()
                                        .put("key", "x")
                                        .put("type", "split")
                                        .put("queue", "remote"))
                                .add(new JsonObject()
                                        .put("key", "y")
                                        .put("type", "split")
                                        .put("queue", "remote"))));
        JsonArray claimed = claimRemote("py-2", 2);
        HttpResponse<Buffer> first = complete(claimed.getJsonObject(0), sleep("twin", 0));
        assertEquals(200, first.statusCode(), first.bodyAsString());
        HttpResponse<Buffer> second = complete(claimed.getJsonObject(1), sleep("twin", 0));
        assertEquals(422, second.statusCode(), "a key spawned before: " + second.bodyAsString());
        assertTrue(second.bodyAsString().contains("already has"), second.bodyAsString());
        assertEquals(
                "running",
                node.getJson("/api/tasks/" + claimed.getJsonObject(1).getString("id"))
                        .getString("state"));
        assertEquals(200, complete(claimed.getJsonObject(1), sleep("other", 0)).statusCode());
        JsonObject flow = flowWhen(answer.getString("flowId"), "succeeded");
        assertEquals(4, flow.getInteger("size"));
    }

    /** Claims from the remote queue as {@code worker} until it holds {@code n} tasks. */
    private JsonArray claimRemote(String worker, int n) throws Exception {
        JsonArray claimed = new JsonArray();
        node.until(
                () -> {
                    HttpResponse<Buffer> claim = node.post(
                            "/api/queues/remote/claim",
                            new JsonObject()
                                    .put("worker", worker)
                                    .put("max", n - claimed.size())
                                    .put("waitMs", 200));
                    claimed.addAll(claim.bodyAsJsonObject().getJsonArray("tasks"));
                    return claimed.size() == n;
                },
                () -> n + " remote tasks were not claimed: " + claimed.encode());
        return claimed;
    }

    /** Completes a claimed remote task with an empty result, spawning {@code spawned}. */
    private HttpResponse<Buffer> complete(JsonObject task, JsonObject spawned) throws Exception {
        return node.post(
                "/api/tasks/" + task.getString("id") + "/complete",
                new JsonObject()
                        .put("lease", task.getJsonObject("lease").getString("token"))
                        .put("result", new JsonObject())
                        .put("spawn", new JsonArray().add(spawned)));
    }

    @Test
    void a_child_whose_parents_results_are_heavier_than_passed_inline_runs_and_reads_them_in_pages() throws Exception {
        JsonObject answer = accepted(new JsonObject()
                .put(
                        "chain",
                        new JsonArray().add(gate("big")).add(sleep("reader", 0).put("maxAttempts", 3))));
        GateHandler.next(TestNode.WAIT).succeed(new JsonObject().put("blob", "x".repeat(5_000)));
        // The reader does not ask for its parents: it is not failed for what it would not read.
        JsonObject flow = flowWhen(answer.getString("flowId"), "succeeded");
        String reader = taskOf(flow, "reader").getString("id");
        JsonObject page = node.getJson("/api/tasks/" + reader + "/parents");
        assertEquals(1, page.getJsonArray("items").size(), page.encode());
        JsonObject big = page.getJsonArray("items").getJsonObject(0);
        assertEquals("big", big.getString("key"));
        assertEquals("succeeded", big.getString("state"));
        assertEquals(5_000, big.getJsonObject("result").getString("blob").length());
        assertEquals(null, page.getString("next"));
    }
}
