package dev.taskline.worker;

import static dev.taskline.testing.TestNode.await;
import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Duration;
import java.util.Base64;
import java.util.List;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Workers over HTTP on a remote queue: claim, heartbeat, complete, fail, fencing, bad input. */
class RemoteWorkerTest {

    private static final String CONFIG = """
      {"queues": {"remote": {"remote": true, "slots": 3, "leaseMs": 5000, "heartbeatMs": 1000,
                             "maxAttempts": 2, "backoffBaseMs": 1000, "backoffCapMs": 1000},
                  "typed": {"remote": true, "types": ["resize"]}}}
      """;

    private TestNode node;
    /** What the last submission's 202 said: running when a waiting claim took it in the insert. */
    private String lastState;

    @BeforeEach
    void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), CONFIG);
    }

    @AfterEach
    void stop() throws Exception {
        node.close();
    }

    private String submit(String type) throws Exception {
        HttpResponse<Buffer> accepted = node.post(
                "/api/tasks",
                new JsonObject().put("type", type).put("queue", "remote").put("payload", new JsonObject().put("n", 1)));
        assertEquals(202, accepted.statusCode(), accepted.bodyAsString());
        lastState = accepted.bodyAsJsonObject().getString("state");
        return accepted.bodyAsJsonObject().getString("id");
    }

    private Future<HttpResponse<Buffer>> claimAsync(String worker, int max, long waitMs) {
        return node.http
                .post("/api/queues/remote/claim")
                .putHeader("Content-Type", "application/json")
                .sendBuffer(Buffer.buffer(new JsonObject()
                        .put("worker", worker)
                        .put("max", max)
                        .put("waitMs", waitMs)
                        .encode()));
    }

    private JsonArray claim(String worker, int max) throws Exception {
        HttpResponse<Buffer> answer = await(claimAsync(worker, max, 0));
        assertEquals(200, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getJsonArray("tasks");
    }

    private HttpResponse<Buffer> complete(String id, String lease, JsonObject result) throws Exception {
        return node.post(
                "/api/tasks/" + id + "/complete",
                new JsonObject().put("lease", lease).put("result", result));
    }

    private static String token(JsonObject claimed) {
        return claimed.getJsonObject("lease").getString("token");
    }

    @Test
    void a_waiting_claim_is_handed_a_task_submitted_meanwhile_and_completes_it() throws Exception {
        // Longer than any test takes, shorter than the test's own wait: an answer with a task means
        // it was handed over when it came, not when the poll ran out.
        Future<HttpResponse<Buffer>> waiting = claimAsync("w1", 10, 55_000);
        node.until(
                "/api/workers",
                w -> w.getJsonArray("workers").stream()
                        .anyMatch(x -> ((JsonObject) x).getString("name").equals("w1")));
        String id = submit("render");
        assertEquals("running", lastState, "journaled claimed for the waiting claim, in its insert");
        HttpResponse<Buffer> answer = await(waiting);
        assertEquals(200, answer.statusCode(), answer.bodyAsString());
        JsonArray tasks = answer.bodyAsJsonObject().getJsonArray("tasks");
        assertEquals(1, tasks.size(), tasks.encode());
        JsonObject task = tasks.getJsonObject(0);
        assertEquals(id, task.getString("id"));
        assertEquals("render", task.getString("type"));
        assertEquals(new JsonObject().put("n", 1), task.getJsonObject("payload"));
        assertEquals(1, task.getInteger("attempt"));
        assertEquals(1, task.getJsonObject("lease").getLong("version"));

        HttpResponse<Buffer> done = complete(id, token(task), new JsonObject().put("frames", 24));
        assertEquals(200, done.statusCode(), done.bodyAsString());
        assertEquals("succeeded", done.bodyAsJsonObject().getString("state"));
        JsonObject stored = node.getJson("/api/tasks/" + id);
        assertEquals(new JsonObject().put("frames", 24), stored.getJsonObject("result"));
        JsonArray history = stored.getJsonArray("history");
        assertEquals(List.of("submitted", "claimed", "succeeded"), reasons(stored));
        assertEquals("w1", history.getJsonObject(1).getString("workerId"));
        JsonObject queue = TestNode.queueIn(node.getJson("/api/queues"), "remote");
        assertEquals(0, queue.getInteger("running"), "the task left the node's custody");
        assertEquals(1, queue.getLong("finished"));
    }

    @Test
    void waiting_claims_are_answered_with_nothing_when_the_node_drains() throws Exception {
        Future<HttpResponse<Buffer>> waiting = claimAsync("w1", 1, 55_000);
        node.until("/api/workers", w -> !w.getJsonArray("workers").isEmpty());
        await(node.node.shutdown(Duration.ofMillis(10)));
        HttpResponse<Buffer> answer = await(waiting);
        assertEquals(200, answer.statusCode());
        assertEquals(0, answer.bodyAsJsonObject().getJsonArray("tasks").size());
        HttpResponse<Buffer> refused = await(claimAsync("w1", 1, 0));
        assertEquals(503, refused.statusCode(), "a draining node sends workers elsewhere");
    }

    @Test
    void a_waiting_claim_gets_the_task_that_a_freed_slot_lets_through() throws Exception {
        for (int i = 0; i < 4; i++) {
            submit("render");
        }
        JsonArray first = claim("w1", 10);
        assertEquals(3, first.size(), "3 slots");
        Future<HttpResponse<Buffer>> waiting = claimAsync("w2", 1, 55_000);
        node.until(() -> await(node.node.passes().remote().waiting("remote")) == 1, () -> "w2 waits");
        JsonObject done = first.getJsonObject(0);
        assertEquals(
                200,
                complete(done.getString("id"), token(done), new JsonObject()).statusCode());
        JsonArray handed = await(waiting).bodyAsJsonObject().getJsonArray("tasks");
        assertEquals(1, handed.size(), "the fourth task, as soon as a slot was free");
    }

    @Test
    void a_claim_whose_client_went_away_takes_no_task() throws Exception {
        io.vertx.core.http.HttpClient client = node.vertx.createHttpClient();
        io.vertx.core.http.HttpClientRequest request = await(client.request(
                io.vertx.core.http.HttpMethod.POST, node.node.httpPort(), "127.0.0.1", "/api/queues/remote/claim"));
        request.putHeader("Content-Type", "application/json");
        request.end(
                new JsonObject().put("worker", "ghost").put("waitMs", 55_000).encode());
        node.until(() -> await(node.node.passes().remote().waiting("remote")) == 1, () -> "the ghost waits");
        await(request.connection().close());
        node.until(
                () -> await(node.node.passes().remote().waiting("remote")) == 0, () -> "the ghost's claim is dropped");
        String id = submit("render");
        JsonArray tasks = claim("w1", 1);
        assertEquals(1, tasks.size(), "the task went to a worker that is there");
        assertEquals(id, tasks.getJsonObject(0).getString("id"));
        await(client.close());
    }

    @Test
    void an_attempt_past_its_timeout_is_ended_however_often_its_worker_heartbeats() throws Exception {
        String id = node.post(
                        "/api/tasks",
                        new JsonObject()
                                .put("type", "render")
                                .put("queue", "remote")
                                .put("timeoutMs", 3_000))
                .bodyAsJsonObject()
                .getString("id");
        JsonObject task = claim("w1", 1).getJsonObject(0);
        node.clock.advance(Duration.ofSeconds(2));
        assertEquals(
                200,
                node.post("/api/tasks/" + id + "/heartbeat", new JsonObject().put("lease", token(task)))
                        .statusCode());
        node.clock.advance(Duration.ofSeconds(2));
        assertEquals(1, await(node.node.passes().remote().runOnce()));
        JsonObject stored = node.getJson("/api/tasks/" + id);
        assertEquals("pending", stored.getString("state"), "retried: it has attempts left");
        assertEquals("timeout", stored.getJsonObject("error").getString("type"));
        assertEquals(409, complete(id, token(task), new JsonObject()).statusCode(), "the late result is fenced");
    }

    private HttpResponse<Buffer> claimTypes(String worker, int max, long waitMs, String... types) throws Exception {
        return await(claimTypesAsync(worker, max, waitMs, types));
    }

    private Future<HttpResponse<Buffer>> claimTypesAsync(String worker, int max, long waitMs, String... types) {
        return node.http
                .post("/api/queues/remote/claim")
                .putHeader("Content-Type", "application/json")
                .sendBuffer(Buffer.buffer(new JsonObject()
                        .put("worker", worker)
                        .put("max", max)
                        .put("waitMs", waitMs)
                        .put("types", new JsonArray(List.of(types)))
                        .encode()));
    }

    private static List<String> ids(JsonArray tasks) {
        return tasks.stream().map(t -> ((JsonObject) t).getString("id")).toList();
    }

    @Test
    void a_claim_for_some_types_takes_only_those_and_leaves_the_others_their_place() throws Exception {
        String render1 = submit("render");
        String crop1 = submit("crop");
        String render2 = submit("render");
        String crop2 = submit("crop");
        HttpResponse<Buffer> crops = claimTypes("cropper", 10, 0, "crop", "blur");
        assertEquals(200, crops.statusCode(), crops.bodyAsString());
        assertEquals(List.of(crop1, crop2), ids(crops.bodyAsJsonObject().getJsonArray("tasks")), "in line order");
        // The queue's 3 slots: two are the cropper's now, so one more task goes out, the first render.
        assertEquals(List.of(render1), ids(claim("any", 10)));
        assertEquals(0, claim("any", 10).size(), "no slot is left");
        JsonObject first = crops.bodyAsJsonObject().getJsonArray("tasks").getJsonObject(0);
        assertEquals(
                200,
                complete(first.getString("id"), token(first), new JsonObject()).statusCode());
        assertEquals(List.of(render2), ids(claim("any", 10)), "the render the cropper left, once a slot was free");
    }

    @Test
    void a_waiting_claim_for_some_types_is_handed_only_those() throws Exception {
        Future<HttpResponse<Buffer>> waiting = claimTypesAsync("cropper", 5, 55_000, "crop");
        node.until(() -> await(node.node.passes().remote().waiting("remote")) == 1, () -> "the cropper waits");
        String render = submit("render");
        assertEquals("pending", lastState, "not journaled claimed for a claim that runs only crops");
        assertEquals(1, await(node.node.passes().remote().waiting("remote")), "the cropper still waits");
        String crop = submit("crop");
        HttpResponse<Buffer> answer = await(waiting);
        assertEquals(List.of(crop), ids(answer.bodyAsJsonObject().getJsonArray("tasks")));
        assertEquals(List.of(render), ids(claim("any", 5)), "the render waited in line for a worker that runs it");
    }

    @Test
    void a_claim_whose_every_task_was_taken_elsewhere_waits_on_for_the_next() throws Exception {
        String taken = submit("render");
        // Another node claims it in the journal; this node still has it in line.
        assertNotNull(await(
                node.otherJournal().claim(java.util.UUID.fromString(taken), 0, "elsewhere", Duration.ofSeconds(30))));
        Future<HttpResponse<Buffer>> waiting = claimAsync("w1", 5, 55_000);
        node.until(
                () -> await(node.node.passes().remote().waiting("remote")) == 1,
                () -> "w1 waits on, its only task lost");
        assertFalse(waiting.isComplete(), "not answered with nothing while its time runs");
        String next = submit("render");
        HttpResponse<Buffer> answer = await(waiting);
        assertEquals(List.of(next), ids(answer.bodyAsJsonObject().getJsonArray("tasks")));
    }

    @Test
    void with_no_claim_waiting_a_task_waits_in_line() throws Exception {
        submit("render");
        assertEquals("pending", lastState, "no local worker takes it");
    }

    @Test
    void a_claim_with_nothing_waiting_answers_an_empty_list() throws Exception {
        assertEquals(0, claim("w1", 5).size());
        HttpResponse<Buffer> later = await(claimAsync("w1", 5, 20));
        assertEquals(0, later.bodyAsJsonObject().getJsonArray("tasks").size());
    }

    @Test
    void slots_bound_the_tasks_leased_at_once() throws Exception {
        for (int i = 0; i < 5; i++) {
            submit("render");
        }
        assertEquals(3, claim("w1", 10).size(), "the queue has 3 slots");
        assertEquals(0, claim("w2", 10).size());
    }

    @Test
    void a_lapsed_lease_is_taken_over_and_the_late_complete_changes_nothing() throws Exception {
        String id = submit("render");
        JsonObject first = claim("w1", 1).getJsonObject(0);

        node.clock.advance(Duration.ofSeconds(6));
        assertEquals(1, await(node.node.passes().recovery().runOnce()).released());
        assertEquals(1, await(node.node.passes().remote().runOnce()), "the node lets go of the lapsed lease");
        await(node.node.passes().recovery().runOnce()); // pages the task back in
        JsonObject second = claim("w2", 1).getJsonObject(0);
        assertEquals(id, second.getString("id"));
        assertEquals(3, second.getJsonObject("lease").getLong("version"));
        assertEquals(2, second.getInteger("attempt"));

        HttpResponse<Buffer> late = complete(id, token(first), new JsonObject().put("by", "w1"));
        assertEquals(409, late.statusCode(), late.bodyAsString());
        assertEquals("urn:taskline:problem:lease-lost", late.bodyAsJsonObject().getString("type"));
        assertEquals("running", late.bodyAsJsonObject().getString("state"));
        HttpResponse<Buffer> beat =
                node.post("/api/tasks/" + id + "/heartbeat", new JsonObject().put("lease", token(first)));
        assertEquals(409, beat.statusCode(), "a stale heartbeat is fenced too");

        assertEquals(
                200,
                complete(id, token(second), new JsonObject().put("by", "w2")).statusCode());
        JsonObject stored = node.getJson("/api/tasks/" + id);
        assertEquals("w2", stored.getJsonObject("result").getString("by"));
        assertEquals(
                1,
                stored.getJsonArray("history").stream()
                        .filter(e -> "succeeded".equals(((JsonObject) e).getString("to")))
                        .count(),
                "succeeded exactly once");
        assertEquals(
                2,
                TestNode.queueIn(node.getJson("/api/queues"), "remote").getLong("fencedWrites"),
                "the late complete and the stale heartbeat, each counted as fenced");
    }

    @Test
    void a_failed_attempt_is_retried_after_the_backoff_and_the_last_one_fails_the_task() throws Exception {
        String id = submit("render");
        JsonObject first = claim("w1", 1).getJsonObject(0);
        HttpResponse<Buffer> retried = node.post(
                "/api/tasks/" + id + "/fail",
                new JsonObject()
                        .put("lease", token(first))
                        .put("error", "model timed out")
                        .put("retry", true));
        assertEquals(200, retried.statusCode(), retried.bodyAsString());
        assertEquals("pending", retried.bodyAsJsonObject().getString("state"));
        assertNotNull(retried.bodyAsJsonObject().getString("retryAt"));
        assertEquals(0, claim("w1", 1).size(), "not before its backoff");

        node.advance(Duration.ofSeconds(1));
        JsonObject second = claim("w1", 1).getJsonObject(0);
        assertEquals(2, second.getInteger("attempt"));
        HttpResponse<Buffer> failed = node.post(
                "/api/tasks/" + id + "/fail",
                new JsonObject().put("lease", token(second)).put("error", "still timing out"));
        assertEquals("failed", failed.bodyAsJsonObject().getString("state"), failed.bodyAsString());
        JsonObject stored = node.getJson("/api/tasks/" + id);
        assertEquals("failed", stored.getString("state"));
        assertEquals("still timing out", stored.getJsonObject("error").getString("message"));
    }

    @Test
    void a_worker_may_refuse_a_task_for_good_and_ask_for_a_retry_at_a_time_of_its_own() throws Exception {
        String permanent = submit("render");
        JsonObject task = claim("w1", 1).getJsonObject(0);
        HttpResponse<Buffer> failed = node.post(
                "/api/tasks/" + permanent + "/fail",
                new JsonObject()
                        .put("lease", token(task))
                        .put("error", "bad input")
                        .put("retry", false));
        assertEquals("failed", failed.bodyAsJsonObject().getString("state"));

        String later = submit("render");
        JsonObject again = claim("w1", 1).getJsonObject(0);
        HttpResponse<Buffer> retried = node.post(
                "/api/tasks/" + later + "/fail",
                new JsonObject().put("lease", token(again)).put("error", "busy").put("retryAfterMs", 60_000));
        assertEquals(
                node.clock.instant().plusSeconds(60).toString(),
                retried.bodyAsJsonObject().getString("retryAt"));
    }

    @Test
    void a_heartbeat_renews_the_lease_carries_progress_and_tells_of_a_cancel() throws Exception {
        String id = submit("render");
        JsonObject task = claim("w1", 1).getJsonObject(0);
        HttpResponse<Buffer> beat = node.post(
                "/api/tasks/" + id + "/heartbeat",
                new JsonObject()
                        .put("lease", token(task))
                        .put("progress", new JsonObject().put("percent", 40).put("message", "frame 10 of 24")));
        assertEquals(200, beat.statusCode(), beat.bodyAsString());
        assertFalse(beat.bodyAsJsonObject().getBoolean("cancelRequested"));
        node.until("/api/tasks/" + id, t -> t.getJsonObject("progress").getInteger("percent") == 40);

        assertEquals(
                202, node.post("/api/tasks/" + id + "/cancel", new JsonObject()).statusCode());
        HttpResponse<Buffer> told =
                node.post("/api/tasks/" + id + "/heartbeat", new JsonObject().put("lease", token(task)));
        assertTrue(told.bodyAsJsonObject().getBoolean("cancelRequested"), told.bodyAsString());
        HttpResponse<Buffer> ended = complete(id, token(task), new JsonObject().put("frames", 10));
        assertEquals(
                "cancelled", ended.bodyAsJsonObject().getString("state"), "the cancel wins, as for a local handler");
        JsonObject stored = node.getJson("/api/tasks/" + id);
        assertEquals("cancelled", stored.getString("state"));
        assertEquals(10, stored.getJsonObject("result").getInteger("frames"), "what it computed is kept");
    }

    @Test
    void tokens_that_are_garbled_made_up_or_another_tasks_get_400_and_change_nothing() throws Exception {
        String a = submit("render");
        String b = submit("render");
        JsonArray claimed = claim("w1", 2);
        JsonObject first = claimed.getJsonObject(0);
        String other = first.getString("id").equals(a) ? b : a;
        String enc = Base64.getUrlEncoder()
                .withoutPadding()
                .encodeToString(("v1|" + other + "|1|1|2|remote|w1").getBytes(java.nio.charset.StandardCharsets.UTF_8));
        String forged = enc + "." + token(first).substring(token(first).indexOf('.') + 1);
        for (String lease : List.of("abc", "", "a.b.c", "%%%.###", forged, token(first))) {
            HttpResponse<Buffer> answer = complete(other, lease, new JsonObject());
            assertEquals(400, answer.statusCode(), lease + ": " + answer.bodyAsString());
            assertEquals(
                    "urn:taskline:problem:invalid-lease",
                    answer.bodyAsJsonObject().getString("type"));
        }
        assertEquals("running", node.getJson("/api/tasks/" + other).getString("state"));
    }

    @Test
    void a_batch_of_completions_is_answered_item_by_item() throws Exception {
        for (int i = 0; i < 3; i++) {
            submit("render");
        }
        JsonArray claimed = claim("w1", 3);
        JsonArray items = new JsonArray();
        for (int i = 0; i < 3; i++) {
            JsonObject c = claimed.getJsonObject(i);
            items.add(new JsonObject()
                    .put("id", c.getString("id"))
                    .put("lease", i == 2 ? "garbled" : token(c))
                    .put("result", new JsonObject().put("i", i)));
        }
        HttpResponse<Buffer> answer = node.post("/api/queues/remote/complete", new JsonObject().put("tasks", items));
        assertEquals(200, answer.statusCode(), answer.bodyAsString());
        JsonArray results = answer.bodyAsJsonObject().getJsonArray("tasks");
        assertEquals(
                List.of(200, 200, 400),
                results.stream().map(r -> ((JsonObject) r).getInteger("status")).toList());
        assertEquals("succeeded", results.getJsonObject(0).getString("state"));
        assertEquals(
                1,
                node.getJson("/api/tasks?state=running&queue=remote")
                        .getJsonArray("tasks")
                        .size());

        JsonArray workers = node.getJson("/api/workers").getJsonArray("workers");
        JsonObject w1 = workers.stream()
                .map(w -> (JsonObject) w)
                .filter(w -> w.getString("name").equals("w1"))
                .findFirst()
                .orElseThrow();
        assertEquals("remote", w1.getString("queue"));
        assertEquals(1, w1.getInteger("leases"), "the one it still holds");
    }

    @Test
    void bad_claims_and_types_get_a_clear_4xx() throws Exception {
        record Case(String path, JsonObject body, int status) {}
        for (Case c : List.of(
                new Case("/api/queues/default/claim", new JsonObject().put("worker", "w1"), 422),
                new Case("/api/queues/nope/claim", new JsonObject().put("worker", "w1"), 404),
                new Case("/api/queues/remote/claim", new JsonObject(), 422),
                new Case("/api/queues/remote/claim", new JsonObject().put("worker", "w 1"), 422),
                new Case(
                        "/api/queues/remote/claim",
                        new JsonObject().put("worker", "w1").put("max", 0),
                        422),
                new Case(
                        "/api/queues/remote/claim",
                        new JsonObject().put("worker", "w1").put("max", 1001),
                        422),
                new Case(
                        "/api/queues/remote/claim",
                        new JsonObject().put("worker", "w1").put("waitMs", 60_001),
                        422),
                new Case(
                        "/api/queues/remote/claim",
                        new JsonObject().put("worker", "w1").put("max", "3"),
                        422),
                new Case(
                        "/api/queues/remote/claim",
                        new JsonObject().put("worker", "w1").put("extra", 1),
                        422),
                new Case(
                        "/api/queues/remote/claim",
                        new JsonObject().put("worker", "w1").put("types", "crop"),
                        422),
                new Case(
                        "/api/queues/remote/claim",
                        new JsonObject().put("worker", "w1").put("types", new JsonArray()),
                        422),
                new Case(
                        "/api/queues/remote/claim",
                        new JsonObject()
                                .put("worker", "w1")
                                .put("types", new JsonArray().add("crop").add(7)),
                        422),
                new Case(
                        "/api/queues/remote/claim",
                        new JsonObject().put("worker", "w1").put("types", new JsonArray().add("bad type!")),
                        422),
                new Case(
                        "/api/queues/typed/claim",
                        new JsonObject().put("worker", "w1").put("types", new JsonArray().add("crop")),
                        422),
                new Case(
                        "/api/queues/typed/claim",
                        new JsonObject().put("worker", "w1").put("types", new JsonArray().add("resize")),
                        200),
                new Case(
                        "/api/queues/typed/claim",
                        new JsonObject()
                                .put("worker", "w1")
                                .put("types", new JsonArray().add("crop").add("resize")),
                        200),
                new Case("/api/tasks", new JsonObject().put("type", "bad type!").put("queue", "remote"), 422),
                new Case("/api/tasks", new JsonObject().put("type", "crop").put("queue", "typed"), 422),
                new Case("/api/tasks", new JsonObject().put("type", "resize").put("queue", "typed"), 202))) {
            HttpResponse<Buffer> answer = node.post(c.path(), c.body());
            assertEquals(c.status(), answer.statusCode(), c + ": " + answer.bodyAsString());
        }
        String id = submit("render");
        JsonObject task = claim("w1", 1).getJsonObject(0);
        assertEquals(
                422,
                node.post("/api/tasks/" + id + "/fail", new JsonObject().put("lease", token(task)))
                        .statusCode(),
                "a failure names its error");
        assertEquals(
                422,
                node.post(
                                "/api/tasks/" + id + "/complete",
                                new JsonObject().put("lease", token(task)).put("result", "text"))
                        .statusCode());
        assertEquals(200, complete(id, token(task), null).statusCode(), "a result may be left out");
    }
}
