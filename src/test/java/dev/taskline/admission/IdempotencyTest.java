package dev.taskline.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;

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
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Idempotency-Key: one task per key, even when requests race; a different body is a conflict. */
class IdempotencyTest {

    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = TestNode.start(
                TestPostgres.newDatabase(),
                "{\"queues\": {\"default\": {\"capacity\": 3}, \"roomy\": {\"capacity\": 1000}}}");
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    private static Future<HttpResponse<Buffer>> send(String path, String key, JsonObject body) {
        return node.http
                .post(path)
                .putHeader("Content-Type", "application/json")
                .putHeader("Idempotency-Key", key)
                .sendBuffer(Buffer.buffer(body.encode()));
    }

    private static JsonObject sleepTask(int ms) {
        return new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", ms));
    }

    @Test
    void the_same_key_and_body_returns_the_first_answer_and_creates_no_new_task() throws Exception {
        HttpResponse<Buffer> first = TestNode.await(send("/api/tasks", "key-a", sleepTask(0)));
        HttpResponse<Buffer> second = TestNode.await(send(
                "/api/tasks",
                "key-a",
                new JsonObject().put("payload", new JsonObject().put("ms", 0)).put("type", "sleep")));
        assertEquals(202, first.statusCode());
        assertEquals(202, second.statusCode(), "the same body with its keys in another order is the same request");
        assertEquals(
                first.bodyAsJsonObject().getString("id"),
                second.bodyAsJsonObject().getString("id"));
        assertEquals("true", second.getHeader("Idempotent-Replayed"));
        assertEquals(
                1,
                node.getJson("/api/tasks?limit=1000").getJsonArray("tasks").stream()
                        .filter(t -> ((JsonObject) t)
                                .getString("id")
                                .equals(first.bodyAsJsonObject().getString("id")))
                        .count());
    }

    @Test
    void the_same_key_with_a_different_body_is_a_conflict_that_changes_nothing() throws Exception {
        assertEquals(
                202, TestNode.await(send("/api/tasks", "key-b", sleepTask(0))).statusCode());
        int before = node.getJson("/api/tasks?limit=1000").getJsonArray("tasks").size();
        HttpResponse<Buffer> conflict = TestNode.await(send("/api/tasks", "key-b", sleepTask(5)));
        assertEquals(409, conflict.statusCode());
        assertEquals("application/problem+json", conflict.getHeader("Content-Type"));
        assertEquals(
                409,
                TestNode.await(send(
                                "/api/batches",
                                "key-b",
                                new JsonObject().put("tasks", new JsonArray().add(sleepTask(0)))))
                        .statusCode(),
                "a key names one request, on one endpoint");
        assertEquals(
                before,
                node.getJson("/api/tasks?limit=1000").getJsonArray("tasks").size());
    }

    @Test
    void racing_requests_with_one_key_create_one_batch() throws Exception {
        JsonObject task = sleepTask(0).put("queue", "roomy");
        JsonObject body =
                new JsonObject().put("tasks", new JsonArray().add(task).add(task.copy()));
        List<Future<HttpResponse<Buffer>>> racing = new ArrayList<>();
        for (int i = 0; i < 12; i++) {
            racing.add(send("/api/batches", "key-race", body));
        }
        TestNode.await(Future.join(racing));
        Set<String> batchIds = new HashSet<>();
        for (Future<HttpResponse<Buffer>> response : racing) {
            assertEquals(202, response.result().statusCode(), response.result().bodyAsString());
            batchIds.add(response.result().bodyAsJsonObject().getString("batchId"));
        }
        assertEquals(1, batchIds.size(), "every racer got the one batch");
        assertEquals(
                2, node.getJson("/api/batches/" + batchIds.iterator().next()).getInteger("size"));
        long tasksOfKey = node.getJson("/api/tasks?limit=1000").getJsonArray("tasks").stream()
                .filter(t -> batchIds.contains(((JsonObject) t).getString("batchId")))
                .count();
        assertEquals(2, tasksOfKey);
    }

    @Test
    void a_replay_is_answered_even_when_the_queue_is_full_now() throws Exception {
        HttpResponse<Buffer> first = TestNode.await(send("/api/tasks", "key-full", sleepTask(0)));
        // A full queue (capacity 3) of long tasks, submitted without keys.
        for (int i = 0; i < 6; i++) {
            node.post("/api/tasks", sleepTask(600_000));
        }
        HttpResponse<Buffer> replay = TestNode.await(send("/api/tasks", "key-full", sleepTask(0)));
        assertEquals(202, replay.statusCode());
        assertEquals(
                first.bodyAsJsonObject().getString("id"),
                replay.bodyAsJsonObject().getString("id"));
    }

    @Test
    void an_empty_or_overlong_key_is_refused() throws Exception {
        assertEquals(
                422,
                TestNode.await(send("/api/tasks", "k".repeat(300), sleepTask(0)))
                        .statusCode());
    }
}
