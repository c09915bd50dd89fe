package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertAll;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import java.nio.charset.StandardCharsets;
import java.util.UUID;
import java.util.stream.Stream;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.MethodOrderer;
import org.junit.jupiter.api.Order;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.TestMethodOrder;
import org.junit.jupiter.params.ParameterizedTest;
import org.junit.jupiter.params.provider.Arguments;
import org.junit.jupiter.params.provider.MethodSource;

/**
 * Malformed and hostile requests against one node. Every refusal must be a well-formed problem
 * document with the exact status, and none may change anything: the checks after the table rely on
 * the table having run first, hence the method order.
 */
@TestMethodOrder(MethodOrderer.OrderAnnotation.class)
class HostileInputTest {

    private static final String CONFIG = "{\"queues\":{\"default\":{\"slots\":1,\"capacity\":50}}}";
    private static final String JSON = "application/json";
    private static final int ONE_MIB = 1024 * 1024;

    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), CONFIG);
    }

    @AfterAll
    static void stop() throws Exception {
        if (node != null) {
            node.close();
        }
    }

    private static JsonObject sleep() {
        return new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0));
    }

    private static JsonObject sleepWith(String field, Object value) {
        return sleep().put(field, value);
    }

    private static Buffer json(Object value) {
        String text = value instanceof JsonObject o
                ? o.encode()
                : value instanceof JsonArray a ? a.encode() : value.toString();
        return Buffer.buffer(text);
    }

    private static JsonObject batchOf(int n) {
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < n; i++) {
            tasks.add(sleep());
        }
        return new JsonObject().put("tasks", tasks);
    }

    private static Buffer nested(int depth) {
        StringBuilder text = new StringBuilder("{\"type\":\"sleep\",\"payload\":");
        text.append("{\"a\":".repeat(depth))
                .append('0')
                .append("}".repeat(depth))
                .append('}');
        return Buffer.buffer(text.toString());
    }

    private static Buffer invalidUtf8() {
        byte[] head = "{\"type\":\"sleep\",\"payload\":{\"note\":\"".getBytes(StandardCharsets.US_ASCII);
        byte[] tail = "\"}}".getBytes(StandardCharsets.US_ASCII);
        // 0xC3 opens a two-byte sequence that 0x28 does not continue; 0xFF never occurs in UTF-8.
        return Buffer.buffer()
                .appendBytes(head)
                .appendBytes(new byte[] {(byte) 0xC3, 0x28, (byte) 0xFF})
                .appendBytes(tail);
    }

    private static JsonObject qualificationMatchWithoutCompany() {
        return new JsonObject()
                .put("type", "qualification-match")
                .put(
                        "payload",
                        new JsonObject()
                                .put(
                                        "project",
                                        new JsonObject().put("name", "Portal").put("requirements", new JsonArray())));
    }

    private static Arguments post(String name, String path, String contentType, Buffer body, int status) {
        return Arguments.of(name, HttpMethod.POST, path, contentType, body, status);
    }

    private static Arguments get(String name, String path, int status) {
        return Arguments.of(name, HttpMethod.GET, path, null, null, status);
    }

    static Stream<Arguments> hostileRequests() {
        String randomId = UUID.randomUUID().toString();
        return Stream.of(
                post("text/plain body", "/api/tasks", "text/plain", json(sleep()), 415),
                post("no Content-Type", "/api/tasks", null, json(sleep()), 415),
                post("JSON sent as form", "/api/tasks", "application/x-www-form-urlencoded", json(sleep()), 415),
                post("invalid JSON", "/api/tasks", JSON, Buffer.buffer("{\"type\": \"sleep\","), 400),
                post("JSON array instead of object", "/api/tasks", JSON, json(new JsonArray().add(sleep())), 400),
                post("JSON string instead of object", "/api/tasks", JSON, Buffer.buffer("\"sleep\""), 400),
                post("empty body", "/api/tasks", JSON, Buffer.buffer(), 400),
                post("invalid UTF-8 bytes", "/api/tasks", JSON, invalidUtf8(), 400),
                post("JSON nested 5000 levels deep", "/api/tasks", JSON, nested(5000), 400),
                post(
                        "body over 1 MiB",
                        "/api/tasks",
                        JSON,
                        json(sleep().put("payload", new JsonObject().put("pad", "x".repeat(ONE_MIB + 1)))),
                        413),
                post("unknown field", "/api/tasks", JSON, json(sleepWith("prority", 5)), 422),
                post("type not a string", "/api/tasks", JSON, json(new JsonObject().put("type", 42)), 422),
                post("type missing", "/api/tasks", JSON, json(new JsonObject().put("payload", new JsonObject())), 422),
                post("type empty", "/api/tasks", JSON, json(new JsonObject().put("type", "")), 422),
                post(
                        "type over 200 characters",
                        "/api/tasks",
                        JSON,
                        json(new JsonObject().put("type", "s".repeat(201))),
                        422),
                post("payload not an object", "/api/tasks", JSON, json(sleepWith("payload", "ms=0")), 422),
                post("payload an array", "/api/tasks", JSON, json(sleepWith("payload", new JsonArray())), 422),
                post("priority as string", "/api/tasks", JSON, json(sleepWith("priority", "5")), 422),
                post("priority as float", "/api/tasks", JSON, json(sleepWith("priority", 1.5)), 422),
                post("priority out of range", "/api/tasks", JSON, json(sleepWith("priority", 5000)), 422),
                post(
                        "priority beyond a long",
                        "/api/tasks",
                        JSON,
                        Buffer.buffer("{\"type\":\"sleep\",\"priority\":123456789012345678901234567890}"),
                        422),
                post("priority beyond an int", "/api/tasks", JSON, json(sleepWith("priority", 1L << 40)), 422),
                post("maxAttempts 0", "/api/tasks", JSON, json(sleepWith("maxAttempts", 0)), 422),
                post("timeoutMs -1", "/api/tasks", JSON, json(sleepWith("timeoutMs", -1)), 422),
                post("queue not a string", "/api/tasks", JSON, json(sleepWith("queue", 7)), 422),
                post("unknown type", "/api/tasks", JSON, json(new JsonObject().put("type", "rm-rf")), 422),
                post("unknown queue", "/api/tasks", JSON, json(sleepWith("queue", "nope")), 422),
                post(
                        "sleep with ms -1",
                        "/api/tasks",
                        JSON,
                        json(sleepWith("payload", new JsonObject().put("ms", -1))),
                        422),
                post(
                        "qualification-match without company",
                        "/api/tasks",
                        JSON,
                        json(qualificationMatchWithoutCompany()),
                        422),
                // PostgreSQL's jsonb cannot hold U+0000; the payload is valid JSON that can never be stored.
                post(
                        "payload string with a NUL character",
                        "/api/tasks",
                        JSON,
                        json(sleepWith("payload", new JsonObject().put("ms", 0).put("note", "a\u0000b"))),
                        422),
                post(
                        "batch tasks not an array",
                        "/api/batches",
                        JSON,
                        json(new JsonObject().put("tasks", sleep())),
                        422),
                post("batch tasks missing", "/api/batches", JSON, json(new JsonObject()), 422),
                post(
                        "batch with an unknown field",
                        "/api/batches",
                        JSON,
                        json(batchOf(1).put("atomic", true)),
                        422),
                post(
                        "batch task not an object",
                        "/api/batches",
                        JSON,
                        json(new JsonObject().put("tasks", new JsonArray().add(1))),
                        422),
                post("empty batch", "/api/batches", JSON, json(batchOf(0)), 422),
                post("batch of 101", "/api/batches", JSON, json(batchOf(101)), 422),
                post(
                        "batch with one bad task among good ones",
                        "/api/batches",
                        JSON,
                        json(new JsonObject()
                                .put(
                                        "tasks",
                                        new JsonArray()
                                                .add(sleep())
                                                .add(sleep())
                                                .add(sleepWith("queue", "nope"))
                                                .add(sleep()))),
                        422),
                post(
                        "batch with one bad payload among good ones",
                        "/api/batches",
                        JSON,
                        json(new JsonObject()
                                .put(
                                        "tasks",
                                        new JsonArray()
                                                .add(sleep())
                                                .add(sleepWith("payload", new JsonObject().put("ms", -1))))),
                        422),
                post("batch sent as text/plain", "/api/batches", "text/plain", json(batchOf(1)), 415),
                get("task id not a UUID", "/api/tasks/not-a-uuid", 404),
                get("task id a UUID with junk after it", "/api/tasks/" + randomId + "x", 404),
                get("unknown task", "/api/tasks/" + randomId, 404),
                get("unknown batch", "/api/batches/" + randomId, 404),
                get("batch id not a UUID", "/api/batches/../../etc/passwd", 404),
                get("limit 0", "/api/tasks?limit=0", 400),
                get("limit abc", "/api/tasks?limit=abc", 400),
                get("limit over the page maximum", "/api/tasks?limit=1001", 400),
                get("limit given twice", "/api/tasks?limit=1&limit=2", 400),
                get("unknown state", "/api/tasks?state=bogus", 400),
                get("after not an id", "/api/tasks?after=xyz", 400),
                get("query with broken percent-encoding", "/api/tasks?limit=%zz", 400),
                get("path with broken percent-encoding", "/api/tasks/%zz", 400),
                // No queue or type name can hold U+0000, and PostgreSQL refuses it in any text parameter.
                get("queue filter with a NUL character", "/api/tasks?queue=%00", 400),
                get("type filter with a NUL character", "/api/tasks?type=%00", 400),
                Arguments.of("DELETE on the task list", HttpMethod.DELETE, "/api/tasks", null, null, 405),
                Arguments.of("PUT on a task", HttpMethod.PUT, "/api/tasks/" + randomId, JSON, json(sleep()), 405),
                get("no such route", "/nope", 404));
    }

    @Order(1)
    @ParameterizedTest(name = "{0} -> {5}")
    @MethodSource("hostileRequests")
    void a_bad_request_gets_its_exact_status_as_a_problem_document(
            String why, HttpMethod method, String path, String contentType, Buffer body, int status) throws Exception {
        HttpRequest<Buffer> request = node.http.request(method, path);
        if (contentType != null) {
            request.putHeader("Content-Type", contentType);
        }
        HttpResponse<Buffer> response = await(body == null ? request.send() : request.sendBuffer(body));
        String text = response.bodyAsString();
        assertAll(
                why,
                () -> assertEquals(status, response.statusCode(), text),
                () -> assertEquals(Problems.CONTENT_TYPE, response.getHeader("Content-Type"), text),
                () -> assertFalse(text.contains("Exception"), "leaks an exception name: " + text),
                () -> assertFalse(text.contains("at dev."), "leaks a stack trace: " + text),
                () -> {
                    JsonObject problem = new JsonObject(text);
                    assertTrue(problem.getString("type").startsWith("urn:taskline:problem:"), text);
                    assertNotNull(problem.getString("title"), text);
                    assertEquals(status, problem.getInteger("status"), text);
                    assertFalse(problem.getString("detail", "").isBlank(), text);
                });
    }

    @Order(1)
    @Test
    void a_chunked_body_over_the_limit_is_refused_without_a_content_length_to_go_by() throws Exception {
        HttpClient client = node.vertx.createHttpClient();
        try {
            String answer = await(client.request(HttpMethod.POST, node.node.httpPort(), "127.0.0.1", "/api/tasks")
                    .compose(request -> {
                        request.setChunked(true).putHeader("Content-Type", JSON);
                        request.write("{\"type\":\"sleep\",\"payload\":{\"pad\":\"");
                        String chunk = "x".repeat(64 * 1024);
                        for (int i = 0; i < 17; i++) {
                            request.write(chunk);
                        }
                        request.end("\"}}");
                        return request.response()
                                .compose(response -> response.body()
                                        .map(body -> response.statusCode() + " " + response.getHeader("Content-Type")
                                                + " " + body));
                    }));
            assertTrue(answer.startsWith("413 " + Problems.CONTENT_TYPE + " {"), answer);
        } finally {
            await(client.close());
        }
    }

    @Order(2)
    @Test
    void the_bad_requests_changed_nothing_and_the_server_is_still_up() throws Exception {
        assertEquals(new JsonArray(), node.getJson("/api/tasks").getJsonArray("tasks"), "nothing was journaled");
        JsonObject queue = node.getJson("/api/queues").getJsonArray("queues").getJsonObject(0);
        assertEquals("default", queue.getString("name"));
        assertEquals(0, queue.getLong("accepted"));
        assertEquals(0, queue.getLong("waiting"), "no reservation was left behind");
        assertEquals(200, node.get("/health/live").statusCode());
    }

    @Order(3)
    @Test
    void a_valid_submission_is_still_accepted_afterwards() throws Exception {
        HttpResponse<Buffer> response = node.post("/api/tasks", sleep());
        assertEquals(202, response.statusCode(), response.bodyAsString());
        String id = response.bodyAsJsonObject().getString("id");
        assertEquals("/api/tasks/" + id, response.getHeader("Location"));
        assertEquals(
                1,
                node.getJson("/api/queues")
                        .getJsonArray("queues")
                        .getJsonObject(0)
                        .getLong("accepted"));
    }
}
