package dev.taskline.worker;

import static dev.taskline.testing.TestNode.await;
import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A remote worker's loop in one round trip: {@code POST /api/queues/{q}/work} hands in completions
 * and failures and claims the next tasks.
 */
class WorkCallTest {

    private static final String CONFIG = """
      {"queues": {"remote": {"remote": true, "slots": 3, "leaseMs": 5000, "heartbeatMs": 1000,
                             "maxAttempts": 2, "backoffBaseMs": 1000, "backoffCapMs": 1000},
                  "local": {"slots": 1}}}
      """;

    private TestNode node;

    @BeforeEach
    void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), CONFIG);
    }

    @AfterEach
    void stop() throws Exception {
        node.close();
    }

    private String submit() throws Exception {
        HttpResponse<Buffer> accepted =
                node.post("/api/tasks", new JsonObject().put("type", "render").put("queue", "remote"));
        assertEquals(202, accepted.statusCode(), accepted.bodyAsString());
        return accepted.bodyAsJsonObject().getString("id");
    }

    private Future<HttpResponse<Buffer>> workAsync(JsonObject body) {
        return node.http
                .post("/api/queues/remote/work")
                .putHeader("Content-Type", "application/json")
                .sendBuffer(body.toBuffer());
    }

    private JsonObject work(JsonObject body) throws Exception {
        HttpResponse<Buffer> answer = await(workAsync(body));
        assertEquals(200, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject();
    }

    private static JsonObject want(int max) {
        return new JsonObject().put("worker", "w1").put("max", max);
    }

    private static JsonObject done(JsonObject claimed, JsonObject result) {
        return new JsonObject()
                .put("id", claimed.getString("id"))
                .put("lease", claimed.getJsonObject("lease").getString("token"))
                .put("result", result);
    }

    private static JsonObject failure(JsonObject claimed, boolean retry) {
        return new JsonObject()
                .put("id", claimed.getString("id"))
                .put("lease", claimed.getJsonObject("lease").getString("token"))
                .put("error", "no luck")
                .put("retry", retry);
    }

    @Test
    void one_call_completes_and_fails_what_was_done_and_claims_the_next_tasks() throws Exception {
        Set<String> ids = new HashSet<>();
        for (int i = 0; i < 5; i++) {
            ids.add(submit());
        }
        JsonObject first = work(want(3));
        assertEquals(List.of(), first.getJsonArray("completed").getList());
        JsonArray held = first.getJsonArray("tasks");
        assertEquals(3, held.size(), "3 slots");

        // Two done, one failed for good: the three slots free as their writes commit, so the claim
        // of the same call takes the two tasks left.
        JsonObject second = work(want(3).put("waitMs", 55_000)
                .put(
                        "complete",
                        new JsonArray()
                                .add(done(held.getJsonObject(0), new JsonObject().put("n", 0)))
                                .add(done(held.getJsonObject(1), new JsonObject().put("n", 1))))
                .put("fail", new JsonArray().add(failure(held.getJsonObject(2), false))));
        JsonArray completed = second.getJsonArray("completed");
        assertEquals(2, completed.size());
        for (int i = 0; i < 2; i++) {
            JsonObject item = completed.getJsonObject(i);
            assertEquals(held.getJsonObject(i).getString("id"), item.getString("id"), "in the order sent");
            assertEquals(200, item.getInteger("status"));
            assertEquals("succeeded", item.getString("state"));
        }
        JsonObject failed = second.getJsonArray("failed").getJsonObject(0);
        assertEquals(held.getJsonObject(2).getString("id"), failed.getString("id"));
        assertEquals(200, failed.getInteger("status"));
        assertEquals("failed", failed.getString("state"));
        JsonArray next = second.getJsonArray("tasks");
        assertEquals(2, next.size(), next.encode());

        JsonObject last = work(want(3).put(
                        "complete",
                        new JsonArray()
                                .add(done(next.getJsonObject(0), new JsonObject()))
                                .add(done(next.getJsonObject(1), new JsonObject()))));
        assertEquals(0, last.getJsonArray("tasks").size());
        Set<String> claimed = new HashSet<>();
        for (JsonArray batch : List.of(held, next)) {
            batch.forEach(t -> claimed.add(((JsonObject) t).getString("id")));
        }
        assertEquals(ids, claimed, "each task claimed once");

        JsonObject stored = node.getJson("/api/tasks/" + held.getJsonObject(1).getString("id"));
        assertEquals(new JsonObject().put("n", 1), stored.getJsonObject("result"));
        assertEquals(List.of("submitted", "claimed", "succeeded"), reasons(stored));
        assertEquals(
                "failed",
                node.getJson("/api/tasks/" + held.getJsonObject(2).getString("id"))
                        .getString("state"));
        JsonObject queue = TestNode.queueIn(node.getJson("/api/queues"), "remote");
        assertEquals(5, queue.getLong("finished"));
        assertEquals(0, queue.getInteger("running"));
    }

    @Test
    void each_write_is_answered_on_its_own_and_a_fenced_one_does_not_stop_the_claim() throws Exception {
        submit();
        JsonObject task = work(want(1)).getJsonArray("tasks").getJsonObject(0);
        JsonObject finished = done(task, new JsonObject());
        assertEquals(
                200,
                work(want(1).put("complete", new JsonArray().add(finished)))
                        .getJsonArray("completed")
                        .getJsonObject(0)
                        .getInteger("status"));
        String next = submit();
        JsonObject again = work(want(1).put("complete", new JsonArray().add(finished)));
        JsonObject item = again.getJsonArray("completed").getJsonObject(0);
        assertEquals(409, item.getInteger("status"), "the task had ended: " + item.encode());
        assertEquals(next, again.getJsonArray("tasks").getJsonObject(0).getString("id"));
    }

    @Test
    void max_zero_hands_in_the_writes_and_claims_nothing() throws Exception {
        submit();
        submit();
        JsonObject task = work(want(1)).getJsonArray("tasks").getJsonObject(0);
        JsonObject answer = work(want(0).put("complete", new JsonArray().add(done(task, new JsonObject()))));
        assertEquals(200, answer.getJsonArray("completed").getJsonObject(0).getInteger("status"));
        assertEquals(0, answer.getJsonArray("tasks").size(), "a task was waiting, and none was claimed");
        assertEquals(1, TestNode.queueIn(node.getJson("/api/queues"), "remote").getInteger("waiting"));
    }

    @Test
    void bad_input_is_a_422_that_changes_nothing() throws Exception {
        submit();
        JsonObject task = work(want(1)).getJsonArray("tasks").getJsonObject(0);
        List<JsonObject> bad = new ArrayList<>();
        bad.add(want(1).put("complete", new JsonObject()));
        bad.add(want(1).put("complete", new JsonArray().add(done(task, null).put("extra", 1))));
        bad.add(want(1).put(
                        "complete",
                        new JsonArray().add(new JsonObject().put("id", "x").put("lease", "y"))));
        bad.add(want(1).put("fail", new JsonArray().add(failure(task, true).put("retry", "yes"))));
        JsonObject noError = failure(task, true);
        noError.remove("error");
        bad.add(want(1).put("fail", new JsonArray().add(noError)));
        bad.add(want(-1).put("complete", new JsonArray().add(done(task, new JsonObject()))));
        bad.add(new JsonObject().put("max", 1).put("complete", new JsonArray().add(done(task, new JsonObject()))));
        for (JsonObject body : bad) {
            HttpResponse<Buffer> answer = await(workAsync(body));
            assertEquals(422, answer.statusCode(), body.encode() + " -> " + answer.bodyAsString());
            assertTrue(answer.getHeader("Content-Type").startsWith("application/problem+json"));
        }
        JsonObject stored = node.getJson("/api/tasks/" + task.getString("id"));
        assertEquals("running", stored.getString("state"), "no write landed");
        HttpResponse<Buffer> local = await(node.http
                .post("/api/queues/local/work")
                .putHeader("Content-Type", "application/json")
                .sendBuffer(want(1).toBuffer()));
        assertEquals(422, local.statusCode(), "a queue the node runs itself has no remote workers");
        assertEquals(
                404,
                await(node.http
                                .post("/api/queues/nowhere/work")
                                .putHeader("Content-Type", "application/json")
                                .sendBuffer(want(1).toBuffer()))
                        .statusCode());
    }

    @Test
    void a_snooze_or_a_release_puts_the_task_back_without_spending_the_attempt() throws Exception {
        String id = submit();
        JsonObject first = work(want(1)).getJsonArray("tasks").getJsonObject(0);
        JsonObject snoozed = work(want(0).put(
                                "fail",
                                new JsonArray()
                                        .add(new JsonObject()
                                                .put("id", id)
                                                .put(
                                                        "lease",
                                                        first.getJsonObject("lease")
                                                                .getString("token"))
                                                .put("snoozeMs", 2000))))
                .getJsonArray("failed")
                .getJsonObject(0);
        assertEquals(200, snoozed.getInteger("status"), snoozed.encode());
        assertEquals("pending", snoozed.getString("state"));
        assertEquals(0, work(want(1)).getJsonArray("tasks").size(), "not due for 2 s");
        node.advance(java.time.Duration.ofMillis(2000));
        JsonObject second = work(want(1)).getJsonArray("tasks").getJsonObject(0);
        assertEquals(1, second.getInteger("attempt"), "the snoozed attempt was not spent");

        HttpResponse<Buffer> released = await(node.http
                .post("/api/tasks/" + id + "/fail")
                .putHeader("Content-Type", "application/json")
                .sendBuffer(new JsonObject()
                        .put("lease", second.getJsonObject("lease").getString("token"))
                        .put("release", true)
                        .toBuffer()));
        assertEquals(200, released.statusCode(), released.bodyAsString());
        assertEquals("pending", released.bodyAsJsonObject().getString("state"));
        JsonObject late = work(want(0).put("complete", new JsonArray().add(done(second, new JsonObject()))))
                .getJsonArray("completed")
                .getJsonObject(0);
        assertEquals(409, late.getInteger("status"), "the released lease is fenced: " + late.encode());

        JsonObject third = work(want(1)).getJsonArray("tasks").getJsonObject(0);
        assertEquals(1, third.getInteger("attempt"));
        work(want(0).put("complete", new JsonArray().add(done(third, new JsonObject().put("ok", true)))));
        JsonObject stored = node.getJson("/api/tasks/" + id);
        assertEquals("succeeded", stored.getString("state"));
        assertEquals(
                List.of("submitted", "claimed", "snoozed", "claimed", "released", "claimed", "succeeded"),
                reasons(stored));

        for (JsonObject bad : List.of(
                new JsonObject().put("lease", "x").put("snoozeMs", 10).put("retry", true),
                new JsonObject().put("lease", "x").put("release", true).put("snoozeMs", 10),
                new JsonObject().put("lease", "x").put("snoozeMs", -1),
                new JsonObject().put("lease", "x").put("release", "yes"))) {
            HttpResponse<Buffer> answer = await(node.http
                    .post("/api/tasks/" + id + "/fail")
                    .putHeader("Content-Type", "application/json")
                    .sendBuffer(bad.toBuffer()));
            assertTrue(
                    answer.statusCode() == 422 || answer.statusCode() == 400,
                    bad.encode() + " -> " + answer.bodyAsString());
        }
    }

    @Test
    void a_draining_node_answers_the_writes_and_claims_nothing() throws Exception {
        submit();
        submit();
        JsonArray held = work(want(1)).getJsonArray("tasks");
        await(node.node.passes().remote().drain());
        JsonObject answer = work(want(1).put("complete", new JsonArray().add(done(held.getJsonObject(0), null))));
        assertEquals(200, answer.getJsonArray("completed").getJsonObject(0).getInteger("status"));
        assertEquals(0, answer.getJsonArray("tasks").size(), "another node may serve the rest");
        assertEquals(503, await(workAsync(want(1))).statusCode(), "with nothing to write, sent elsewhere");
        assertEquals(
                "succeeded",
                node.getJson("/api/tasks/" + held.getJsonObject(0).getString("id"))
                        .getString("state"));
    }
}
