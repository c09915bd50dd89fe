package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.journal.PgUrl;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.MultiMap;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import java.net.URLEncoder;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.Test;

/**
 * Every route of the OpenAPI document, each of its path, query and header parameters and each
 * field of its body in turn given a hostile value (a NUL, a lone surrogate, 10 kB of text, a value
 * of the wrong JSON type): no answer is a 5xx, and a request refused with a 4xx changed nothing in
 * the journal.
 */
class FuzzRoutesTest {

    private static final String CONFIG = """
            {"queues": {"default": {"slots": 1, "capacity": 1000},
                        "remote": {"remote": true, "types": ["sum"], "capacity": 1000}}}
            """;

    /** What each kind of parameter is given instead of a plausible value. */
    private static final List<Object> HOSTILE = List.of(
            "\u0000",
            "a\u0000b",
            "\ud800",
            "x\udc00y",
            "x".repeat(10_240),
            "",
            -1,
            1.5,
            1e300,
            true,
            new JsonArray().add("\u0000"),
            new JsonObject().put("a\u0000", 1),
            new JsonObject().putNull("x"));

    /** A body each route takes, so that a hostile field is read beside valid ones. */
    private static final Map<String, JsonObject> BODIES = Map.of(
            "POST /api/tasks", new JsonObject().put("type", "sleep"),
            "POST /api/batches",
                    new JsonObject().put("tasks", new JsonArray().add(new JsonObject().put("type", "sleep"))),
            "POST /api/keys", new JsonObject().put("scopes", new JsonArray().add("read")),
            "POST /api/schedules",
                    new JsonObject()
                            .put("name", "fuzz")
                            .put("every", "PT1H")
                            .put("task", new JsonObject().put("type", "sleep")),
            "POST /api/tasks/retry", new JsonObject().put("queue", "default"),
            "POST /api/queues/{queue}/claim",
                    new JsonObject().put("worker", "w").put("waitMs", 0),
            "POST /api/queues/{queue}/complete", new JsonObject().put("tasks", new JsonArray()),
            "POST /api/queues/{queue}/heartbeat", new JsonObject().put("tasks", new JsonArray()),
            "POST /api/tasks/{id}/complete", new JsonObject().put("lease", "x"),
            "POST /api/tasks/{id}/heartbeat", new JsonObject().put("lease", "x"));

    private static final Map<String, String> PLAUSIBLE =
            Map.of("id", UUID.randomUUID().toString(), "queue", "remote", "name", "fuzz");

    @Test
    void no_route_answers_a_hostile_value_with_a_5xx_and_a_refused_one_changes_nothing() throws Exception {
        JsonObject api = new JsonObject(Files.readString(Path.of("src/main/resources/openapi.json")));
        List<Request> requests = new ArrayList<>();
        for (Map.Entry<String, Object> path : api.getJsonObject("paths")) {
            for (Map.Entry<String, Object> op : (JsonObject) path.getValue()) {
                HttpMethod method = HttpMethod.valueOf(op.getKey().toUpperCase());
                if (List.of(HttpMethod.GET, HttpMethod.POST, HttpMethod.DELETE).contains(method)) {
                    String route = method.name() + " " + path.getKey();
                    requests.addAll(requests(route, path.getKey(), (JsonObject) op.getValue(), api));
                }
            }
        }
        assertTrue(requests.size() > 500, "requests: " + requests.size());
        assertEquals(List.of(), sendAll(requests, false));
    }

    /**
     * Sends each request in turn to a node on a journal of its own where nothing runs or ticks, so
     * that what the journal holds changes only by the requests; answers what went wrong: a 5xx, a
     * refusal that changed the journal, and ({@code timed}) an answer slower than a second twice.
     */
    private static List<String> sendAll(List<Request> requests, boolean timed) throws Exception {
        String db = TestPostgres.newDatabase();
        List<String> broken = new ArrayList<>();
        try (TestNode node = TestNode.start(db, CONFIG)) {
            Pool pool = PgBuilder.pool()
                    .with(new PoolOptions().setMaxSize(1))
                    .connectingTo(PgUrl.parse(db))
                    .using(node.vertx)
                    .build();
            node.node.passes().scheduler().halt();
            for (String queue : List.of("default", "remote")) {
                assertEquals(
                        200,
                        node.post("/api/queues/" + queue + "/pause", new JsonObject())
                                .statusCode());
            }
            Map<String, Long> before = journal(pool);
            for (Request request : requests) {
                long started = System.nanoTime();
                HttpResponse<Buffer> answer = send(node, requestMethod(request), request);
                long ms = (System.nanoTime() - started) / 1_000_000;
                if (timed && ms > 1_000) {
                    // Once more, to tell a loaded machine's pause from a request that costs that much.
                    started = System.nanoTime();
                    answer = send(node, requestMethod(request), request);
                    ms = (System.nanoTime() - started) / 1_000_000;
                    if (ms > 1_000) {
                        broken.add(request + " took " + ms + " ms, twice");
                    }
                }
                int status = answer.statusCode();
                if (status >= 500) {
                    broken.add(request + " -> " + status + " " + answer.bodyAsString());
                }
                Map<String, Long> after = journal(pool);
                if (status >= 400 && !after.equals(before)) {
                    broken.add(request + " -> " + status + " changed " + before + " to " + after);
                }
                before = after;
            }
            await(pool.close());
        }
        return broken;
    }

    /**
     * Sizes and counts a tenant controls, each at its most hostile within the body limit (1 MiB):
     * a string of 900 kB, an array of 100,000 numbers or 20,000 objects, an object of 50,000
     * fields, arrays nested 5,000 deep.
     */
    private static List<Object> hostileSizes() {
        JsonArray numbers = new JsonArray();
        for (int i = 0; i < 100_000; i++) {
            numbers.add(i % 10);
        }
        JsonArray objects = new JsonArray();
        for (int i = 0; i < 20_000; i++) {
            objects.add(new JsonObject());
        }
        JsonObject wide = new JsonObject();
        for (int i = 0; i < 50_000; i++) {
            wide.put("k" + i, 0);
        }
        return List.of("x".repeat(900_000), numbers, objects, wide, new Raw("[".repeat(5_000) + "]".repeat(5_000)));
    }

    /** A value sent as the JSON text it holds. */
    private record Raw(String json) {}

    /** Flows whose graphs would take the node's memory and time were they built before being counted. */
    private static List<Object> graphBombs() {
        JsonArray group = new JsonArray();
        for (int i = 0; i < 5_000; i++) {
            group.add(new JsonObject().put("type", "sleep"));
        }
        JsonObject chainOfGroups = new JsonObject()
                .put(
                        "chain",
                        new JsonArray()
                                .add(new JsonObject().put("group", group))
                                .add(new JsonObject().put("group", group)));
        JsonObject chord = new JsonObject()
                .put("chord", new JsonObject().put("group", group).put("then", new JsonObject().put("group", group)));
        // Shorthands nested past their cap: refused for the depth before anything is read.
        Object nested = new JsonObject().put("type", "sleep");
        for (int i = 0; i < 200; i++) {
            nested = new JsonObject().put("group", new JsonArray().add(nested));
        }
        JsonArray dag = new JsonArray();
        JsonArray every = new JsonArray();
        for (int i = 0; i < 2_000; i++) {
            every.add("k" + i);
        }
        for (int i = 0; i < 2_000; i++) {
            dag.add(new JsonObject().put("key", "k" + i).put("type", "sleep").put("dependsOn", every));
        }
        return List.of(
                chainOfGroups,
                chord,
                new JsonObject().put("chain", new JsonArray().add(nested)),
                new JsonObject().put("tasks", dag));
    }

    @Test
    void no_route_answers_a_hostile_size_or_count_with_a_5xx_or_slowly_and_a_refused_one_changes_nothing()
            throws Exception {
        JsonObject api = new JsonObject(Files.readString(Path.of("src/main/resources/openapi.json")));
        List<Object> sizes = hostileSizes();
        List<Request> requests = new ArrayList<>();
        for (Map.Entry<String, Object> path : api.getJsonObject("paths")) {
            for (Map.Entry<String, Object> op : (JsonObject) path.getValue()) {
                HttpMethod method = HttpMethod.valueOf(op.getKey().toUpperCase());
                if (!List.of(HttpMethod.GET, HttpMethod.POST, HttpMethod.DELETE).contains(method)) {
                    continue;
                }
                String route = method.name() + " " + path.getKey();
                JsonObject operation = (JsonObject) op.getValue();
                for (Object p : operation.getJsonArray("parameters", new JsonArray())) {
                    JsonObject param = (JsonObject) p;
                    if (param.containsKey("$ref")) {
                        param = resolve(api, param.getString("$ref"));
                    }
                    if (!"query".equals(param.getString("in"))) {
                        continue;
                    }
                    for (String value :
                            List.of("9".repeat(40), "-9223372036854775809", "2147483648", "x".repeat(6_000))) {
                        requests.add(new Request(
                                route + " " + param.getString("name") + "=" + describe(value),
                                path(path.getKey(), PLAUSIBLE),
                                Map.of(param.getString("name"), value),
                                Map.of(),
                                BODIES.get(route)));
                    }
                }
                JsonObject schema = bodySchema(operation, api);
                JsonObject base = BODIES.getOrDefault(route, new JsonObject());
                if (schema == null) {
                    continue;
                }
                requests.add(new Request(
                        route + " body nested 5000 deep",
                        path(path.getKey(), PLAUSIBLE),
                        Map.of(),
                        Map.of(),
                        new Raw("{\"a\":" + "[".repeat(5_000) + "]".repeat(5_000) + "}")));
                for (String field :
                        schema.getJsonObject("properties", new JsonObject()).fieldNames()) {
                    for (Object value : sizes) {
                        requests.add(new Request(
                                route + " body." + field + "=" + describe(value),
                                path(path.getKey(), PLAUSIBLE),
                                Map.of(),
                                Map.of(),
                                value instanceof Raw raw
                                        ? new Raw(base.copy()
                                                .put(field, "@")
                                                .encode()
                                                .replace("\"@\"", raw.json()))
                                        : base.copy().put(field, value)));
                    }
                }
            }
        }
        for (Object bomb : graphBombs()) {
            requests.add(new Request("POST /api/flows " + describe(bomb), "/api/flows", Map.of(), Map.of(), bomb));
        }
        assertTrue(requests.size() > 300, "requests: " + requests.size());
        assertEquals(List.of(), sendAll(requests, true));
    }

    private static HttpMethod requestMethod(Request request) {
        return HttpMethod.valueOf(request.label().substring(0, request.label().indexOf(' ')));
    }

    /** One request of the walk: its path (encoded), query, headers and body (null: none). */
    private record Request(
            String label, String path, Map<String, String> query, Map<String, String> headers, Object body) {
        @Override
        public String toString() {
            return label;
        }
    }

    private static List<Request> requests(String route, String template, JsonObject operation, JsonObject api) {
        List<Request> all = new ArrayList<>();
        List<JsonObject> params = new ArrayList<>();
        for (Object p : operation.getJsonArray("parameters", new JsonArray())) {
            JsonObject param = (JsonObject) p;
            if (param.containsKey("$ref")) {
                param = resolve(api, param.getString("$ref"));
            }
            params.add(param);
        }
        JsonObject base = BODIES.get(route);
        // Each parameter hostile in turn, the others plausible.
        for (JsonObject param : params) {
            for (Object value : HOSTILE) {
                if (!(value instanceof String text)) {
                    continue; // a parameter is text; other types are for bodies
                }
                Map<String, String> pathValues = new LinkedHashMap<>(PLAUSIBLE);
                Map<String, String> query = new LinkedHashMap<>();
                Map<String, String> headers = new LinkedHashMap<>();
                String name = param.getString("name");
                switch (param.getString("in")) {
                    case "path" -> pathValues.put(name, text);
                    case "query" -> query.put(name, text);
                    case "header" -> {
                        if (text.indexOf('\0') >= 0 || text.length() > 8_000) {
                            continue; // not sendable as an HTTP/1.1 header
                        }
                        headers.put(name, text);
                    }
                    default -> {
                        continue;
                    }
                }
                all.add(new Request(
                        route + " " + name + "=" + describe(value), path(template, pathValues), query, headers, base));
            }
        }
        // Each field of the body hostile in turn.
        JsonObject schema = bodySchema(operation, api);
        if (schema != null && base != null) {
            for (String field :
                    schema.getJsonObject("properties", new JsonObject()).fieldNames()) {
                for (Object value : HOSTILE) {
                    JsonObject body = base.copy().put(field, value);
                    all.add(new Request(
                            route + " body." + field + "=" + describe(value),
                            path(template, PLAUSIBLE),
                            Map.of(),
                            Map.of(),
                            body));
                }
            }
        }
        if (all.isEmpty()) {
            all.add(new Request(route, path(template, PLAUSIBLE), Map.of(), Map.of(), base));
        }
        return all;
    }

    private static JsonObject bodySchema(JsonObject operation, JsonObject api) {
        JsonObject body = operation.getJsonObject("requestBody");
        if (body == null) {
            return null;
        }
        JsonObject json = body.getJsonObject("content", new JsonObject()).getJsonObject("application/json");
        if (json == null) {
            return null;
        }
        JsonObject schema = json.getJsonObject("schema");
        return schema.containsKey("$ref") ? resolve(api, schema.getString("$ref")) : schema;
    }

    private static JsonObject resolve(JsonObject api, String ref) {
        JsonObject at = api;
        for (String part : ref.substring(2).split("/")) {
            at = at.getJsonObject(part);
        }
        return at;
    }

    private static String path(String template, Map<String, String> values) {
        String path = template;
        for (Map.Entry<String, String> v : values.entrySet()) {
            path = path.replace(
                    "{" + v.getKey() + "}",
                    URLEncoder.encode(v.getValue(), StandardCharsets.UTF_8).replace("+", "%20"));
        }
        return path;
    }

    private static String describe(Object value) {
        String text = String.valueOf(value);
        return text.length() > 20 ? text.substring(0, 20) + "...(" + text.length() + ")" : text.replace("\0", "\\0");
    }

    private static HttpResponse<Buffer> send(TestNode node, HttpMethod method, Request request) throws Exception {
        HttpRequest<Buffer> http = node.http.request(method, request.path()).timeout(TimeUnit.SECONDS.toMillis(30));
        MultiMap query = http.queryParams();
        request.query().forEach(query::add);
        request.headers().forEach(http::putHeader);
        if (request.body() == null) {
            return await(http.send());
        }
        http.putHeader("Content-Type", "application/json");
        return await(http.sendBuffer(Buffer.buffer(
                request.body() instanceof JsonObject json
                        ? json.encode()
                        : request.body() instanceof Raw raw ? raw.json() : String.valueOf(request.body()))));
    }

    /** What a refused request must not change: the journal's rows, counted per table. */
    private static Map<String, Long> journal(Pool pool) throws Exception {
        Map<String, Long> counts = new LinkedHashMap<>();
        for (Row row : await(pool.query("""
                        SELECT 'tasks' AS t, count(*) AS n FROM tasks UNION ALL
                        SELECT 'task_events', count(*) FROM task_events UNION ALL
                        SELECT 'batches', count(*) FROM batches UNION ALL
                        SELECT 'schedules', count(*) FROM schedules UNION ALL
                        SELECT 'api_keys', count(*) FROM api_keys UNION ALL
                        SELECT 'revoked', count(revoked_at) FROM api_keys UNION ALL
                        SELECT 'paused', count(*) FROM queue_controls WHERE paused UNION ALL
                        SELECT 'idempotency_keys', count(*) FROM idempotency_keys
                        """).execute())) {
            counts.put(row.getString("t"), row.getLong("n"));
        }
        return counts;
    }
}
