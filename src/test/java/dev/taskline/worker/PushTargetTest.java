package dev.taskline.worker;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerRequest;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.List;
import java.util.concurrent.ConcurrentLinkedDeque;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** A push queue runs each task by POSTing it to a target on this machine, whose answer decides. */
class PushTargetTest {

    private Vertx vertx;
    private HttpServer target;
    /** What the target answers, one script step per call; the last one repeats. */
    private final ConcurrentLinkedDeque<Consumer<HttpServerRequest>> script = new ConcurrentLinkedDeque<>();

    private final List<JsonObject> calls = new CopyOnWriteArrayList<>();
    private TestNode node;
    /** The node's bound on a body, which a target's answer is read up to. */
    private static final int LIMIT = 65_536;

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx();
        target = await(vertx.createHttpServer()
                .requestHandler(request -> request.body().onSuccess(body -> {
                    calls.add(new JsonObject()
                            .put("body", body.toJsonObject())
                            .put("taskId", request.getHeader("Taskline-Task-Id"))
                            .put("attempt", request.getHeader("Taskline-Attempt"))
                            .put("version", request.getHeader("Taskline-Lease-Version"))
                            .put("key", request.getHeader("Idempotency-Key"))
                            .put("auth", request.getHeader("X-Api-Key")));
                    Consumer<HttpServerRequest> step = script.size() > 1 ? script.poll() : script.peek();
                    step.accept(request);
                }))
                .listen(0, "127.0.0.1"));
        node = TestNode.start(
                TestPostgres.newDatabase(),
                new JsonObject()
                        .put("http", new JsonObject().put("bodyLimitBytes", LIMIT))
                        .put(
                                "queues",
                                new JsonObject()
                                        .put("default", new JsonObject().put("slots", 2))
                                        .put(
                                                "pushed",
                                                new JsonObject()
                                                        .put("slots", 2)
                                                        .put("maxAttempts", 3)
                                                        .put("backoffBaseMs", 0)
                                                        .put("backoffCapMs", 0)
                                                        .put(
                                                                "push",
                                                                new JsonObject()
                                                                        .put(
                                                                                "url",
                                                                                "http://127.0.0.1:"
                                                                                        + target.actualPort() + "/run")
                                                                        .put("timeoutMs", 2_000)
                                                                        .put(
                                                                                "headers",
                                                                                new JsonObject()
                                                                                        .put("X-Api-Key", "k1")))))
                        .encode());
    }

    @AfterEach
    void stop() throws Exception {
        node.close();
        await(vertx.close());
    }

    private String submit() throws Exception {
        return node.post(
                        "/api/tasks",
                        new JsonObject()
                                .put("type", "render")
                                .put("queue", "pushed")
                                .put("payload", new JsonObject().put("frame", 7)))
                .bodyAsJsonObject()
                .getString("id");
    }

    private static Consumer<HttpServerRequest> answer(int status, String body, String... headers) {
        return request -> {
            var response = request.response().setStatusCode(status);
            for (int i = 0; i + 1 < headers.length; i += 2) {
                response.putHeader(headers[i], headers[i + 1]);
            }
            response.end(body);
        };
    }

    @Test
    void a_target_writes_steps_and_suspends_and_its_next_call_carries_the_steps_done() throws Exception {
        String json = "Content-Type";
        script.add(answer(
                200,
                "{\"steps\": {\"reserve\": {\"r\": 1}}, \"suspend\": {\"signal\": \"go\"}}",
                json,
                "application/json"));
        script.add(answer(200, "{\"shipped\": true}", json, "application/json"));
        String id = submit();
        JsonObject waiting = node.waitForTask(
                id, t -> "pending".equals(t.getString("state")) && t.getValue("wait") != null, "a wait");
        assertEquals("go", waiting.getJsonObject("wait").getString("name"));
        assertEquals("reserve", waiting.getJsonArray("steps").getJsonObject(0).getString("name"));
        assertEquals(
                202,
                node.post(
                                "/api/tasks/" + id + "/signals/go",
                                new JsonObject().put("payload", new JsonObject().put("n", 1)))
                        .statusCode());
        JsonObject task = node.waitForState(id, "succeeded");
        assertEquals(new JsonObject().put("shipped", true), task.getJsonObject("result"));
        assertEquals(1, task.getInteger("attempt"), "the suspend spent no attempt");
        assertFalse(calls.get(0).getJsonObject("body").containsKey("steps"), "a first call has none");
        JsonObject steps = calls.get(1).getJsonObject("body").getJsonObject("steps");
        assertEquals(1, steps.getJsonObject("reserve").getInteger("r"));
        assertEquals(1, steps.getJsonObject("go").getJsonObject("payload").getInteger("n"));
    }

    @Test
    void pushed_back_then_failing_then_answering_ends_succeeded_with_the_right_attempts() throws Exception {
        script.add(answer(503, "busy", "Retry-After", "1"));
        script.add(answer(500, "oops"));
        script.add(answer(200, "{\"ok\": true}", "Content-Type", "application/json"));
        String id = submit();
        node.until(() -> calls.size() == 1, () -> "the first call");
        node.waitForState(id, "pending"); // snoozed
        node.advance(Duration.ofSeconds(1));
        JsonObject task = node.waitForState(id, "succeeded");
        assertEquals(new JsonObject().put("ok", true), task.getJsonObject("result"));
        assertEquals(2, task.getInteger("attempt"), "the 503 spent no attempt, the 500 one");
        assertEquals(
                List.of("1", "1", "2"),
                calls.stream().map(c -> c.getString("attempt")).toList());
        JsonObject first = calls.get(0);
        assertEquals(id, first.getString("taskId"));
        assertEquals(id, first.getString("key"), "Idempotency-Key is the task id");
        assertEquals("k1", first.getString("auth"), "the configured headers go along");
        assertEquals(
                new JsonObject()
                        .put("id", id)
                        .put("type", "render")
                        .put("payload", new JsonObject().put("frame", 7))
                        .put("attempt", 1),
                first.getJsonObject("body"));
        assertTrue(Long.parseLong(calls.get(2).getString("version")) > Long.parseLong(first.getString("version")));
    }

    @Test
    void a_flow_tasks_target_spawns_into_the_flow_and_its_dependents_wait_for_what_it_spawned() throws Exception {
        script.add(answer(
                200,
                new JsonObject()
                        .put("items", 2)
                        .put(
                                "spawn",
                                new JsonArray()
                                        .add(sleepTask().put("key", "item-a"))
                                        .add(sleepTask().put("key", "item-b")))
                        .encode()));
        JsonObject flow = new JsonObject()
                .put(
                        "tasks",
                        new JsonArray()
                                .add(listTask())
                                .add(sleepTask().put("key", "report").put("dependsOn", new JsonArray().add("list"))));
        String flowId = node.post("/api/flows", flow).bodyAsJsonObject().getString("flowId");
        JsonObject done = node.waitForFlowState(flowId, "succeeded");
        assertEquals("list", calls.get(0).getJsonObject("body").getString("flowKey"), "the target is told its key");
        List<String> keys = done.getJsonArray("tasks").stream()
                .map(t -> ((JsonObject) t).getString("key"))
                .sorted()
                .toList();
        assertEquals(List.of("item-a", "item-b", "list", "report"), keys);
        JsonObject list = task(done, "list");
        assertEquals(new JsonObject().put("items", 2), list.getJsonObject("result"), "spawn is not kept in the result");
        assertEquals(
                List.of("item-a", "item-b", "list"),
                task(done, "report").getJsonArray("dependsOn").stream()
                        .map(Object::toString)
                        .sorted()
                        .toList(),
                "the report waits for what its parent spawned too");

        // A task of no flow keeps the whole body, and a flow task's spawn that is not a list of tasks
        // fails it for good: the same target would answer the same again.
        script.clear();
        script.add(answer(200, "{\"spawn\": 5}"));
        String plain = submit();
        assertEquals(
                new JsonObject().put("spawn", 5),
                node.waitForState(plain, "succeeded").getJsonObject("result"));
        String bad = node.post("/api/flows", new JsonObject().put("tasks", new JsonArray().add(listTask())))
                .bodyAsJsonObject()
                .getJsonArray("tasks")
                .getJsonObject(0)
                .getString("id");
        JsonObject failed = node.waitForState(bad, "failed");
        assertEquals(1, failed.getInteger("attempt"));
        assertTrue(failed.getJsonObject("error").getString("message").contains("spawn"), failed.encode());
    }

    /** The flow task the push target renders: its answer may spawn. */
    private static JsonObject listTask() {
        return new JsonObject().put("key", "list").put("type", "render").put("queue", "pushed");
    }

    private static JsonObject sleepTask() {
        return new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0));
    }

    private static JsonObject task(JsonObject flow, String key) {
        return flow.getJsonArray("tasks").stream()
                .map(JsonObject.class::cast)
                .filter(t -> key.equals(t.getString("key")))
                .findFirst()
                .orElseThrow();
    }

    @Test
    void a_client_error_fails_the_task_at_once_with_the_bodys_text() throws Exception {
        script.add(answer(400, "frame 7 does not exist"));
        String id = submit();
        JsonObject task = node.waitForState(id, "failed");
        assertEquals(1, task.getInteger("attempt"));
        assertTrue(task.getJsonObject("error").getString("message").contains("frame 7 does not exist"), task.encode());
        assertEquals(1, calls.size());
    }

    @Test
    void a_body_that_is_not_json_is_kept_as_text_and_a_redirect_is_not_followed() throws Exception {
        script.add(answer(200, "done"));
        String text = submit();
        assertEquals(
                new JsonObject().put("body", "done"),
                node.waitForState(text, "succeeded").getJsonObject("result"));
        script.clear();
        script.add(answer(302, "", "Location", "http://127.0.0.1:1/elsewhere"));
        String moved = submit();
        JsonObject task = node.waitForState(moved, "failed");
        assertTrue(task.getJsonObject("error").getString("message").contains("redirect"), task.encode());
        assertEquals(1, task.getInteger("attempt"), "a redirect is the target's mistake: not retried");
    }

    @Test
    void a_target_that_resets_the_connection_fails_the_attempt_and_the_retry_runs() throws Exception {
        script.add(request -> request.connection().close());
        script.add(answer(200, "{\"ok\": true}"));
        String id = submit();
        JsonObject task = node.waitForState(id, "succeeded");
        assertEquals(2, task.getInteger("attempt"), "the reset spent an attempt");
        assertEquals(new JsonObject().put("ok", true), task.getJsonObject("result"));
        assertEquals(2, calls.size());
    }

    @Test
    void a_target_that_never_answers_times_out_and_each_attempt_fails_until_none_is_left() throws Exception {
        script.add(request -> {});
        String id = submit();
        JsonObject task = node.waitForState(id, "failed");
        assertEquals(3, task.getInteger("attempt"));
        assertTrue(task.getJsonObject("error").getString("message").contains("did not answer"), task.encode());
    }

    @Test
    void an_answer_past_the_bound_is_a_target_error_retried_as_any_and_nothing_of_it_is_stored() throws Exception {
        String big = new JsonObject().put("blob", "x".repeat(LIMIT)).encode();
        // Told in advance (Content-Length), then only found out while reading (chunked).
        script.add(answer(200, big, "Content-Type", "application/json"));
        script.add(request -> {
            var response = request.response().setChunked(true).putHeader("Content-Type", "application/json");
            response.write(big.substring(0, LIMIT / 2));
            response.end(big.substring(LIMIT / 2));
        });
        String id = submit();
        JsonObject task = node.waitForState(id, "failed");
        assertEquals(3, task.getInteger("attempt"), "retried as any target error: " + task.encode());
        assertTrue(task.getJsonObject("error").getString("message").contains(LIMIT + " bytes"), task.encode());
        assertNull(task.getValue("result"));
        assertEquals(3, calls(id));
        assertEquals(200, node.get("/api/tasks?queue=pushed").statusCode(), "the tenant's lists read");
    }

    @Test
    void an_answer_that_breaks_a_rule_of_the_api_fails_the_task_at_once_naming_it() throws Exception {
        String json = "Content-Type";
        String[][] cases = {
            {"{\"note\": \"a\\u0000b\"}", "NUL"},
            {"{\"steps\": {\"a\\u0000b\": 1}}", "NUL"},
            {"{\"steps\": {\"ok\": \"a\\u0000b\"}}", "NUL"},
            {"{\"suspend\": {\"step\": \"s\", \"until\": \"+1000000000-01-01T00:00:00Z\"}}", "until"},
            {"{\"suspend\": {\"step\": \"s\", \"sleepMs\": 9223372036854775807}}", "sleepMs"},
            {"{\"suspend\": {\"signal\": \"go\", \"timeoutMs\": 99999999999999}}", "timeoutMs"},
            {"{\"steps\": {\"" + "s".repeat(201) + "\": 1}}", "step's name"},
        };
        for (String[] c : cases) {
            script.clear();
            script.add(answer(200, c[0], json, "application/json"));
            String id = submit();
            JsonObject task = node.waitForState(id, "failed");
            String message = task.getJsonObject("error").getString("message");
            assertTrue(message.contains(c[1]), c[0] + ": " + message);
            assertEquals(1, task.getInteger("attempt"), c[0] + ": not retried");
            assertEquals(1, calls(id), c[0] + ": the target is not called again");
            assertEquals(
                    0, node.getJson("/api/tasks/" + id).getJsonArray("steps").size(), c[0]);
        }
    }

    /** How many times the target was called for task {@code id}. */
    private long calls(String id) {
        return calls.stream().filter(c -> id.equals(c.getString("taskId"))).count();
    }
}
