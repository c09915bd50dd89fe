package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.auth.ApiKeys;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** With API keys configured: who may call which route, and what a tenant's key sees. */
class AuthTest {

    /** Every key's secret, by the name the tests use. */
    private static final Map<String, String> SECRETS = new LinkedHashMap<>();

    private static final Map<String, JsonObject> KEYS = Map.ofEntries(
            Map.entry("admin", key(null, "admin")),
            Map.entry("acme", key("acme", "submit", "read")),
            Map.entry("globex", key("globex", "submit", "read")),
            Map.entry("acme-worker", key("acme", "work")),
            Map.entry("globex-worker", key("globex", "work")),
            Map.entry("any-worker", key(null, "work")),
            Map.entry("other-queue-worker", key(null, "work").put("queues", new JsonArray().add("elsewhere"))),
            // Each lacks one scope and has the others, for the matrix.
            Map.entry("no-submit", key(null, "read", "work")),
            Map.entry("no-read", key(null, "submit", "work")),
            Map.entry("no-work", key(null, "submit", "read")),
            Map.entry("no-admin", key(null, "submit", "read", "work")),
            Map.entry("no-read-or-work", key(null, "submit")));

    /** The scope each route needs; a route missing here fails the matrix, so none can be forgotten. */
    private static final Map<String, String> SCOPE_OF = Map.ofEntries(
            Map.entry("POST /api/tasks", "submit"),
            Map.entry("GET /api/tasks", "read"),
            Map.entry("GET /api/tasks/{id}", "read"),
            Map.entry("POST /api/tasks/{id}/cancel", "submit"),
            Map.entry("POST /api/tasks/{id}/retry", "submit"),
            Map.entry("GET /api/tasks/{id}/events", "read"),
            Map.entry("GET /api/tasks/{id}/steps", "read"),
            Map.entry("GET /api/tasks/{id}/signals", "read"),
            Map.entry("GET /api/tasks/{id}/history", "read"),
            // A child's parents: for the tenant's readers, and for the workers of its queue.
            Map.entry("GET /api/tasks/{id}/parents", "read-or-work"),
            Map.entry("POST /api/tasks/retry", "admin"),
            Map.entry("POST /api/batches", "submit"),
            Map.entry("GET /api/batches/{id}", "read"),
            Map.entry("POST /api/batches/{id}/cancel", "submit"),
            Map.entry("GET /api/batches/{id}/events", "read"),
            Map.entry("POST /api/flows", "submit"),
            Map.entry("GET /api/flows", "read"),
            Map.entry("GET /api/flows/{id}", "read"),
            Map.entry("POST /api/flows/{id}/cancel", "submit"),
            Map.entry("POST /api/flows/{id}/retry", "submit"),
            Map.entry("GET /api/flows/{id}/events", "read"),
            Map.entry("GET /api/queues", "read"),
            Map.entry("GET /api/stats", "read"),
            Map.entry("POST /api/queues/{queue}/claim", "work"),
            Map.entry("POST /api/queues/{queue}/work", "work"),
            Map.entry("POST /api/queues/{queue}/complete", "work"),
            Map.entry("POST /api/queues/{queue}/heartbeat", "work"),
            Map.entry("POST /api/tasks/{id}/heartbeat", "work"),
            Map.entry("POST /api/tasks/{id}/complete", "work"),
            Map.entry("POST /api/tasks/{id}/fail", "work"),
            Map.entry("POST /api/tasks/{id}/steps/{name}", "work"),
            Map.entry("POST /api/tasks/{id}/signals/{name}", "submit"),
            Map.entry("POST /api/events", "submit"),
            Map.entry("GET /api/workers", "admin"),
            Map.entry("GET /api/nodes", "admin"),
            Map.entry("POST /api/queues/{queue}/pause", "admin"),
            Map.entry("POST /api/queues/{queue}/resume", "admin"),
            Map.entry("POST /api/keys", "admin"),
            Map.entry("GET /api/keys", "admin"),
            Map.entry("DELETE /api/keys/{id}", "admin"),
            Map.entry("POST /api/schedules", "admin"),
            Map.entry("GET /api/schedules", "read"),
            Map.entry("GET /api/schedules/{name}", "read"),
            Map.entry("DELETE /api/schedules/{name}", "admin"),
            Map.entry("POST /api/schedules/{name}/pause", "admin"),
            Map.entry("POST /api/schedules/{name}/resume", "admin"),
            // Any key may open a session for itself, and close one.
            Map.entry("POST /api/session", "any"),
            Map.entry("DELETE /api/session", "any"),
            Map.entry("GET /metrics", "admin"));

    private static final Set<String> OPEN =
            Set.of("GET /", "GET /health/live", "GET /health/ready", "GET /openapi.json");

    private static TestNode node;

    private static JsonObject key(String tenant, String... scopes) {
        JsonObject key = new JsonObject().put("scopes", new JsonArray(List.of(scopes)));
        return tenant == null ? key : key.put("tenant", tenant);
    }

    @BeforeAll
    static void start() throws Exception {
        JsonArray keys = new JsonArray();
        for (Map.Entry<String, JsonObject> e : KEYS.entrySet()) {
            String secret = ApiKeys.newSecret(new java.security.SecureRandom());
            SECRETS.put(e.getKey(), secret);
            keys.add(e.getValue().copy().put("id", e.getKey()).put("hash", ApiKeys.hash(secret)));
        }
        node = TestNode.start(
                TestPostgres.newDatabase(),
                new JsonObject()
                        .put("queues", new JsonObject().put("remote", new JsonObject().put("remote", true)))
                        .put("auth", new JsonObject().put("keys", keys).put("maxFailuresPerMinute", 1_000_000))
                        .encode());
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    private static HttpResponse<Buffer> send(HttpMethod method, String path, JsonObject body, String... headers)
            throws Exception {
        HttpRequest<Buffer> request = node.http.request(method, path);
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.headers().add(headers[i], headers[i + 1]); // add, not put: a header may come twice
        }
        if (body == null) {
            return await(request.timeout(10_000).send());
        }
        return await(request.putHeader("Content-Type", "application/json")
                .timeout(10_000)
                .sendBuffer(body.toBuffer()));
    }

    private static HttpResponse<Buffer> as(String key, HttpMethod method, String path, JsonObject body)
            throws Exception {
        return send(method, path, body, "Authorization", "Bearer " + SECRETS.get(key));
    }

    /** A body each route takes as valid, so that what answers is who is calling, not what was sent. */
    private static JsonObject bodyFor(String route) {
        return switch (route) {
            case "POST /api/tasks" ->
                new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0));
            case "POST /api/batches" -> new JsonObject().put("tasks", new JsonArray().add(bodyFor("POST /api/tasks")));
            case "POST /api/flows" ->
                new JsonObject()
                        .put(
                                "chain",
                                new JsonArray()
                                        .add(bodyFor("POST /api/tasks").put("delayMs", 3_600_000))
                                        .add(bodyFor("POST /api/tasks")));
            case "POST /api/tasks/retry" -> new JsonObject().put("queue", "default");
            case "POST /api/keys" -> new JsonObject().put("scopes", new JsonArray().add("read"));
            case "POST /api/schedules" ->
                new JsonObject()
                        .put("name", "s-" + UUID.randomUUID())
                        .put("every", "PT1H")
                        .put("task", new JsonObject().put("type", "sleep"));
            case "POST /api/queues/{queue}/claim", "POST /api/queues/{queue}/work" ->
                new JsonObject().put("worker", "w1");
            case "POST /api/queues/{queue}/complete", "POST /api/queues/{queue}/heartbeat" ->
                new JsonObject()
                        .put(
                                "tasks",
                                new JsonArray()
                                        .add(new JsonObject()
                                                .put("id", UUID.randomUUID().toString())
                                                .put("lease", "x")));
            case "POST /api/tasks/{id}/heartbeat", "POST /api/tasks/{id}/complete" ->
                new JsonObject().put("lease", "x");
            case "POST /api/tasks/{id}/fail" ->
                new JsonObject().put("lease", "x").put("error", "e");
            case "POST /api/tasks/{id}/steps/{name}" ->
                new JsonObject().put("lease", "x").put("result", 1);
            case "POST /api/tasks/{id}/signals/{name}" -> new JsonObject();
            case "POST /api/events" -> new JsonObject().put("name", "e");
            default -> null;
        };
    }

    private static HttpMethod method(String route) {
        return HttpMethod.valueOf(route.substring(0, route.indexOf(' ')));
    }

    private static String path(String route) {
        return route.substring(route.indexOf(' ') + 1)
                .replace("{id}", UUID.randomUUID().toString())
                .replace("{queue}", "remote")
                .replace("{name}", "no-such-schedule");
    }

    @Test
    void every_route_answers_who_may_call_it() throws Exception {
        List<String> routes = node.node.httpRoutes();
        List<String> wrong = new ArrayList<>();
        for (String route : routes) {
            if (OPEN.contains(route)) {
                assertFalse(
                        Set.of(401, 403)
                                .contains(send(method(route), path(route), null).statusCode()),
                        route);
                continue;
            }
            String scope = SCOPE_OF.get(route);
            assertNotNull(scope, "a route the matrix does not know: " + route + "; say which scope it needs");
            JsonObject body = bodyFor(route);
            HttpResponse<Buffer> none = send(method(route), path(route), body);
            HttpResponse<Buffer> unknown = send(method(route), path(route), body, "Authorization", "Bearer tl_nobody");
            HttpResponse<Buffer> lacking =
                    scope.equals("any") ? null : as("no-" + scope, method(route), path(route), body);
            HttpResponse<Buffer> right = as(
                    scope.equals("admin")
                            ? "admin"
                            : scope.equals("any")
                                    ? "acme"
                                    : scope.equals("read-or-work") ? "no-read" : "no-" + other(scope),
                    method(route),
                    path(route),
                    body);
            if (none.statusCode() != 401 || !"Bearer realm=\"taskline\"".equals(none.getHeader("WWW-Authenticate"))) {
                wrong.add(route + " without a key: " + none.statusCode());
            }
            if (unknown.statusCode() != 401) {
                wrong.add(route + " with an unknown key: " + unknown.statusCode());
            }
            if (lacking != null && lacking.statusCode() != 403) {
                wrong.add(
                        route + " without scope " + scope + ": " + lacking.statusCode() + " " + lacking.bodyAsString());
            }
            if (Set.of(401, 403, 500).contains(right.statusCode())) {
                wrong.add(route + " with scope " + scope + ": " + right.statusCode() + " " + right.bodyAsString());
            }
            if (right.statusCode() / 100 != 2
                    && !right.getHeader("Content-Type").startsWith("application/problem+json")) {
                wrong.add(route + ": a refusal that is not problem+json");
            }
        }
        assertEquals(List.of(), wrong);
        assertTrue(routes.containsAll(SCOPE_OF.keySet()), "the matrix names routes the router no longer has");
    }

    @Test
    void every_route_that_names_a_task_or_batch_hides_another_tenants_one() throws Exception {
        // Pending a long while: cancel and retry find it in a state they act on, if they may see it.
        String task = as(
                        "acme",
                        HttpMethod.POST,
                        "/api/tasks",
                        bodyFor("POST /api/tasks").put("delayMs", 3_600_000))
                .bodyAsJsonObject()
                .getString("id");
        String batch = as("acme", HttpMethod.POST, "/api/batches", bodyFor("POST /api/batches"))
                .bodyAsJsonObject()
                .getString("batchId");
        String flow = as("acme", HttpMethod.POST, "/api/flows", bodyFor("POST /api/flows"))
                .bodyAsJsonObject()
                .getString("flowId");
        List<String> wrong = new ArrayList<>();
        int checked = 0;
        for (String route : node.node.httpRoutes()) {
            String scope = SCOPE_OF.get(route);
            if (!route.contains("{id}")
                    || !Set.of("read", "submit", "read-or-work").contains(scope)) {
                continue; // no task named, or a scope no tenant key of this test has (admin, work)
            }
            String named = route.contains("/batches/") ? batch : route.contains("/flows/") ? flow : task;
            String path = route.substring(route.indexOf(' ') + 1).replace("{id}", named);
            HttpResponse<Buffer> other = as("globex", method(route), path, bodyFor(route));
            HttpResponse<Buffer> unknown = as(
                    "globex",
                    method(route),
                    path.replace(named, UUID.randomUUID().toString()),
                    bodyFor(route));
            if (other.statusCode() != 404
                    || !other.bodyAsJsonObject()
                            .getString("title")
                            .equals(unknown.bodyAsJsonObject().getString("title"))
                    || other.bodyAsString().contains("acme")) {
                wrong.add(route + ": " + other.statusCode() + " " + other.bodyAsString());
            }
            checked++;
        }
        assertEquals(List.of(), wrong);
        assertTrue(checked >= 15, "routes checked: " + checked);
        assertEquals(
                "running",
                as("acme", HttpMethod.GET, "/api/flows/" + flow, null)
                        .bodyAsJsonObject()
                        .getString("state"),
                "another tenant's cancel of the flow changed nothing");
        assertEquals(
                "pending",
                as("acme", HttpMethod.GET, "/api/tasks/" + task, null)
                        .bodyAsJsonObject()
                        .getString("state"),
                "another tenant's cancel changed nothing");
    }

    /** A scope other than {@code scope} and admin, so that "no-X" for it still has {@code scope}. */
    private static String other(String scope) {
        return scope.equals("read") ? "submit" : "read";
    }

    private static String submit(String key, String tenantHeader) throws Exception {
        HttpRequest<Buffer> request =
                node.http.post("/api/tasks").putHeader("Authorization", "Bearer " + SECRETS.get(key));
        if (tenantHeader != null) {
            request.putHeader("Taskline-Tenant", tenantHeader);
        }
        HttpResponse<Buffer> answer = await(request.sendJsonObject(
                new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0))));
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }

    @Test
    void a_tenants_key_sees_only_its_tenants_tasks_and_another_tenants_id_is_not_found() throws Exception {
        String acmes = submit("acme", null);
        node.until(
                () -> "succeeded"
                        .equals(as("admin", HttpMethod.GET, "/api/tasks/" + acmes, null)
                                .bodyAsJsonObject()
                                .getString("state")),
                () -> "the task to end");
        JsonObject own = as("acme", HttpMethod.GET, "/api/tasks/" + acmes, null).bodyAsJsonObject();
        assertEquals("acme", own.getString("tenant"), "a tenant key's submissions are its tenant's");

        HttpResponse<Buffer> other = as("globex", HttpMethod.GET, "/api/tasks/" + acmes, null);
        HttpResponse<Buffer> missing = as("globex", HttpMethod.GET, "/api/tasks/" + UUID.randomUUID(), null);
        assertEquals(404, other.statusCode());
        assertEquals(
                missing.bodyAsJsonObject().getString("title"),
                other.bodyAsJsonObject().getString("title"));
        assertFalse(other.bodyAsString().contains("acme"), "nothing of the other tenant's task leaks");
        assertEquals(
                404,
                as("globex", HttpMethod.POST, "/api/tasks/" + acmes + "/cancel", null)
                        .statusCode());
        assertEquals(
                404,
                as("globex", HttpMethod.POST, "/api/tasks/" + acmes + "/retry", null)
                        .statusCode());
        assertEquals(
                404,
                as("globex", HttpMethod.GET, "/api/tasks/" + acmes + "/events", null)
                        .statusCode());
        assertEquals(
                200, as("admin", HttpMethod.GET, "/api/tasks/" + acmes, null).statusCode(), "an admin sees all");

        String globexs = submit("globex", null);
        JsonArray listed = as("globex", HttpMethod.GET, "/api/tasks?limit=100", null)
                .bodyAsJsonObject()
                .getJsonArray("tasks");
        assertTrue(
                listed.stream().anyMatch(t -> ((JsonObject) t).getString("id").equals(globexs)));
        assertTrue(
                listed.stream().allMatch(t -> "globex".equals(((JsonObject) t).getString("tenant"))), listed.encode());
    }

    @Test
    void only_an_admin_key_may_name_a_tenant() throws Exception {
        HttpResponse<Buffer> refused = await(node.http
                .post("/api/tasks")
                .putHeader("Authorization", "Bearer " + SECRETS.get("acme"))
                .putHeader("Taskline-Tenant", "globex")
                .sendJsonObject(new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0))));
        assertEquals(403, refused.statusCode(), refused.bodyAsString());
        String forGlobex = submit("admin", "globex");
        assertEquals(
                "globex",
                as("globex", HttpMethod.GET, "/api/tasks/" + forGlobex, null)
                        .bodyAsJsonObject()
                        .getString("tenant"));
    }

    @Test
    void a_lease_taken_by_a_tenants_worker_is_refused_to_another_tenants_key() throws Exception {
        String id = as(
                        "acme",
                        HttpMethod.POST,
                        "/api/tasks",
                        new JsonObject().put("type", "render").put("queue", "remote"))
                .bodyAsJsonObject()
                .getString("id");
        JsonObject claimed = null;
        // Other tasks of the test may wait in the queue too: acme's worker takes acme's only.
        for (int i = 0; i < 20 && claimed == null; i++) {
            for (Object t : as(
                            "acme-worker",
                            HttpMethod.POST,
                            "/api/queues/remote/claim",
                            new JsonObject().put("worker", "acme-1").put("max", 10))
                    .bodyAsJsonObject()
                    .getJsonArray("tasks")) {
                if (((JsonObject) t).getString("id").equals(id)) {
                    claimed = (JsonObject) t;
                }
            }
        }
        assertNotNull(claimed, "acme's worker claimed acme's task");
        String lease = claimed.getJsonObject("lease").getString("token");
        JsonObject heartbeat = new JsonObject().put("lease", lease);
        assertEquals(
                403,
                as("globex-worker", HttpMethod.POST, "/api/tasks/" + id + "/heartbeat", heartbeat)
                        .statusCode());
        assertEquals(
                403,
                as(
                                "globex-worker",
                                HttpMethod.POST,
                                "/api/tasks/" + id + "/fail",
                                new JsonObject().put("lease", lease).put("error", "taken"))
                        .statusCode());
        JsonObject batch = as(
                        "globex-worker",
                        HttpMethod.POST,
                        "/api/queues/remote/complete",
                        new JsonObject()
                                .put(
                                        "tasks",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("id", id)
                                                        .put("lease", lease)
                                                        .put("result", new JsonObject()))))
                .bodyAsJsonObject();
        assertEquals(403, batch.getJsonArray("tasks").getJsonObject(0).getInteger("status"), batch.encode());
        assertEquals(
                "running",
                as("admin", HttpMethod.GET, "/api/tasks/" + id, null)
                        .bodyAsJsonObject()
                        .getString("state"),
                "nothing was written");
        assertEquals(
                200,
                as(
                                "acme-worker",
                                HttpMethod.POST,
                                "/api/tasks/" + id + "/complete",
                                new JsonObject().put("lease", lease).put("result", new JsonObject()))
                        .statusCode(),
                "its own tenant's worker writes it");
    }

    @Test
    void a_tenants_worker_claims_only_its_tenants_tasks() throws Exception {
        String acmes = null;
        for (String key : List.of("globex", "acme", "globex")) {
            HttpResponse<Buffer> answer = as(
                    key,
                    HttpMethod.POST,
                    "/api/tasks",
                    new JsonObject().put("type", "render").put("queue", "remote"));
            assertEquals(202, answer.statusCode(), answer.bodyAsString());
            if (key.equals("acme")) {
                acmes = answer.bodyAsJsonObject().getString("id");
            }
        }
        JsonArray claimed = as(
                        "acme-worker",
                        HttpMethod.POST,
                        "/api/queues/remote/claim",
                        new JsonObject().put("worker", "acme-1").put("max", 10))
                .bodyAsJsonObject()
                .getJsonArray("tasks");
        assertEquals(1, claimed.size(), claimed.encode());
        assertEquals(acmes, claimed.getJsonObject(0).getString("id"));
        assertEquals(
                2,
                as(
                                "any-worker",
                                HttpMethod.POST,
                                "/api/queues/remote/claim",
                                new JsonObject().put("worker", "any-1").put("max", 10))
                        .bodyAsJsonObject()
                        .getJsonArray("tasks")
                        .size(),
                "a key that sees every tenant takes the rest");
        assertEquals(
                403,
                as(
                                "other-queue-worker",
                                HttpMethod.POST,
                                "/api/queues/remote/claim",
                                new JsonObject().put("worker", "x"))
                        .statusCode(),
                "a key limited to other queues");
        String token = claimed.getJsonObject(0).getJsonObject("lease").getString("token");
        assertEquals(
                403,
                as(
                                "other-queue-worker",
                                HttpMethod.POST,
                                "/api/tasks/" + acmes + "/complete",
                                new JsonObject().put("lease", token))
                        .statusCode(),
                "nor may it write with a token of this queue");
        assertEquals(
                200,
                as(
                                "acme-worker",
                                HttpMethod.POST,
                                "/api/tasks/" + acmes + "/complete",
                                new JsonObject().put("lease", token))
                        .statusCode());
    }

    @Test
    void malformed_authorization_is_401_and_changes_nothing() throws Exception {
        long before = as("admin", HttpMethod.GET, "/api/stats", null)
                .bodyAsJsonObject()
                .getLong("accepted");
        JsonObject task = bodyFor("POST /api/tasks");
        List<String[]> cases = List.of(
                new String[] {"Authorization", SECRETS.get("acme")},
                new String[] {"Authorization", "Basic " + SECRETS.get("acme")},
                new String[] {"Authorization", "Bearer "},
                new String[] {"Authorization", ""},
                new String[] {"Authorization", "Bearer tl_\u00e9t\u00e9"},
                new String[] {
                    "Authorization", "Bearer " + SECRETS.get("acme"), "Authorization", "Bearer " + SECRETS.get("acme")
                });
        for (String[] headers : cases) {
            HttpResponse<Buffer> answer = send(HttpMethod.POST, "/api/tasks", task, headers);
            assertEquals(401, answer.statusCode(), String.join(" | ", headers) + ": " + answer.bodyAsString());
            assertTrue(answer.getHeader("Content-Type").startsWith("application/problem+json"));
        }
        assertEquals(
                before,
                as("admin", HttpMethod.GET, "/api/stats", null)
                        .bodyAsJsonObject()
                        .getLong("accepted"),
                "nothing admitted");
        // Past the server's header limit (8 KB) the request is not read at all: 431 before any route.
        // The server closes that connection, so it goes on a client of its own, not the shared pool.
        io.vertx.ext.web.client.WebClient own = io.vertx.ext.web.client.WebClient.create(
                node.vertx,
                new io.vertx.ext.web.client.WebClientOptions()
                        .setDefaultHost("127.0.0.1")
                        .setDefaultPort(node.node.httpPort()));
        try {
            assertEquals(
                    431,
                    await(own.post("/api/tasks")
                                    .putHeader("Authorization", "Bearer tl_" + "x".repeat(10_000))
                                    .sendJsonObject(task))
                            .statusCode());
        } finally {
            own.close();
        }
    }

    private static JsonObject defaultQueueAs(String key) throws Exception {
        return TestNode.queueIn(as(key, HttpMethod.GET, "/api/queues", null).bodyAsJsonObject(), "default");
    }

    @Test
    void schedules_belong_to_no_tenant_so_a_tenants_key_does_not_see_them() throws Exception {
        JsonObject body = new JsonObject()
                .put("name", "ops-only")
                .put("every", "PT1H")
                .put("task", new JsonObject().put("type", "sleep"));
        assertEquals(201, as("admin", HttpMethod.POST, "/api/schedules", body).statusCode());
        assertEquals(403, as("acme", HttpMethod.GET, "/api/schedules", null).statusCode());
        assertEquals(
                403, as("acme", HttpMethod.GET, "/api/schedules/ops-only", null).statusCode());
        assertEquals(
                200,
                as("no-submit", HttpMethod.GET, "/api/schedules/ops-only", null).statusCode());
        assertEquals(
                204,
                as("admin", HttpMethod.DELETE, "/api/schedules/ops-only", null).statusCode());
    }

    @Test
    void a_tenants_key_sees_its_own_counts_only() throws Exception {
        long acmeBefore = defaultQueueAs("acme").getLong("accepted");
        long globexBefore = defaultQueueAs("globex").getLong("accepted");
        long nodeBefore = defaultQueueAs("admin").getLong("accepted");
        submit("acme", null);
        submit("acme", null);
        JsonObject acme = defaultQueueAs("acme");
        assertEquals(acmeBefore + 2, acme.getLong("accepted"), acme.encode());
        assertEquals(
                globexBefore, defaultQueueAs("globex").getLong("accepted"), "another tenant's tasks are not counted");
        assertEquals(nodeBefore + 2, defaultQueueAs("admin").getLong("accepted"), "an admin sees the node's");
        assertEquals(null, acme.getValue("rates"), "the node's meters are not a tenant's");
        assertEquals(null, acme.getValue("rejected"));
        JsonObject stats = as("acme", HttpMethod.GET, "/api/stats", null).bodyAsJsonObject();
        assertEquals(
                stats.getLong("accepted") - stats.getLong("finished"), stats.getLong("unfinished"), stats.encode());
    }

    @Test
    void an_events_url_opens_that_stream_without_a_header_and_nothing_else() throws Exception {
        HttpResponse<Buffer> accepted = as("acme", HttpMethod.POST, "/api/tasks", bodyFor("POST /api/tasks"));
        String id = accepted.bodyAsJsonObject().getString("id");
        String url = accepted.bodyAsJsonObject().getString("eventsUrl");
        assertTrue(url.startsWith("/api/tasks/" + id + "/events?token="), url);
        int port = node.node.httpPort();
        try (dev.taskline.testing.SseClient stream = dev.taskline.testing.SseClient.open(node.vertx, port, url, null)) {
            assertEquals("snapshot", stream.next().event(), "EventSource sends no header: the token is enough");
        }
        String token = url.substring(url.indexOf("token=") + 6);
        String other = submit("acme", null);
        // Refusals are read with the shared client, bounded by its 10 s time-out: SseClient.status once
        // waited its full 60 s here in a full run (see the closing note of this change).
        assertEquals(
                401,
                send(HttpMethod.GET, "/api/tasks/" + other + "/events?token=" + token, null)
                        .statusCode(),
                "another task's stream");
        assertEquals(
                401,
                send(HttpMethod.GET, "/api/tasks/" + id + "?token=" + token, null)
                        .statusCode(),
                "a stream token is not a key");
        String forged = forge(token);
        assertEquals(
                401,
                send(HttpMethod.GET, "/api/tasks/" + id + "/events?token=" + forged, null)
                        .statusCode());
        JsonObject batch = as("globex", HttpMethod.POST, "/api/batches", bodyFor("POST /api/batches"))
                .bodyAsJsonObject();
        assertTrue(
                batch.getString("eventsUrl").contains("/api/batches/" + batch.getString("batchId") + "/events?token="));
        assertTrue(
                as("acme", HttpMethod.GET, "/api/tasks/" + id, null)
                        .bodyAsJsonObject()
                        .getString("eventsUrl")
                        .contains("token="),
                "a task read anew gives a fresh link");

        assertEquals(
                400,
                send(HttpMethod.GET, "/api/tasks/" + id + "/events?token=" + token + "&token=" + token, null)
                        .statusCode(),
                "two tokens");
        assertEquals(
                400,
                send(HttpMethod.GET, "/api/tasks/" + id + "/events?token=%zz", null)
                        .statusCode());
        node.clock.advance(java.time.Duration.ofSeconds(dev.taskline.auth.StreamTokens.TTL_SECONDS + 1));
        assertEquals(401, send(HttpMethod.GET, url, null).statusCode(), "expired");
    }

    @Test
    void a_cancel_and_a_retry_are_journaled_with_the_key_that_asked() throws Exception {
        HttpResponse<Buffer> accepted = as(
                "acme",
                HttpMethod.POST,
                "/api/tasks",
                bodyFor("POST /api/tasks").put("delayMs", 3_600_000));
        String id = accepted.bodyAsJsonObject().getString("id");
        assertEquals(
                202,
                as("acme", HttpMethod.POST, "/api/tasks/" + id + "/cancel", null)
                        .statusCode());
        assertEquals(
                202,
                as("admin", HttpMethod.POST, "/api/tasks/" + id + "/retry", null)
                        .statusCode());
        Map<String, String> byAdmin = actors(as("admin", HttpMethod.GET, "/api/tasks/" + id, null));
        assertEquals("acme", byAdmin.get("cancelled"), byAdmin.toString());
        assertEquals("admin", byAdmin.get("retried"), byAdmin.toString());
        // Which key acted is an admin's to know; the task's own tenant sees what was done, not by whom.
        Map<String, String> byAcme = actors(as("acme", HttpMethod.GET, "/api/tasks/" + id, null));
        assertTrue(byAcme.containsKey("cancelled") && byAcme.containsKey("retried"), byAcme.toString());
        assertEquals(null, byAcme.get("cancelled"), byAcme.toString());
        assertEquals(null, byAcme.get("retried"), byAcme.toString());
    }

    /** Each event's reason, with the key its detail names as the one that acted (null: none named). */
    private static Map<String, String> actors(HttpResponse<Buffer> task) {
        Map<String, String> by = new LinkedHashMap<>();
        task.bodyAsJsonObject().getJsonArray("history").forEach(e -> {
            JsonObject event = (JsonObject) e;
            by.put(
                    event.getString("reason"),
                    event.getJsonObject("detail") == null
                            ? null
                            : event.getJsonObject("detail").getString("by"));
        });
        return by;
    }

    @Test
    void a_session_cookie_acts_as_its_key_and_its_changes_need_the_csrf_value() throws Exception {
        HttpResponse<Buffer> opened = as("acme", HttpMethod.POST, "/api/session", null);
        assertEquals(200, opened.statusCode(), opened.bodyAsString());
        String setCookie = opened.getHeader("Set-Cookie");
        assertTrue(setCookie.toLowerCase().contains("httponly") && setCookie.contains("SameSite=Strict"), setCookie);
        String cookie = setCookie.substring(0, setCookie.indexOf(';'));
        String csrf = opened.bodyAsJsonObject().getString("csrf");
        assertEquals("acme", opened.bodyAsJsonObject().getString("tenant"));

        String acmes = submit("acme", null);
        String globexs = submit("globex", null);
        assertEquals(
                200,
                send(HttpMethod.GET, "/api/tasks/" + acmes, null, "Cookie", cookie)
                        .statusCode());
        assertEquals(
                404,
                send(HttpMethod.GET, "/api/tasks/" + globexs, null, "Cookie", cookie)
                        .statusCode(),
                "the session is the tenant's key");
        JsonObject task = bodyFor("POST /api/tasks");
        HttpResponse<Buffer> noCsrf = send(HttpMethod.POST, "/api/tasks", task, "Cookie", cookie);
        assertEquals(403, noCsrf.statusCode(), noCsrf.bodyAsString());
        assertEquals(
                403,
                send(HttpMethod.POST, "/api/tasks", task, "Cookie", cookie, "X-CSRF-Token", "guess")
                        .statusCode());
        HttpResponse<Buffer> withCsrf =
                send(HttpMethod.POST, "/api/tasks", task, "Cookie", cookie, "X-CSRF-Token", csrf);
        assertEquals(202, withCsrf.statusCode(), withCsrf.bodyAsString());
        String forged = forge(cookie);
        assertEquals(
                401,
                send(HttpMethod.GET, "/api/tasks/" + acmes, null, "Cookie", forged)
                        .statusCode());
        HttpResponse<Buffer> closed =
                send(HttpMethod.DELETE, "/api/session", null, "Cookie", cookie, "X-CSRF-Token", csrf);
        assertEquals(204, closed.statusCode());
        assertTrue(closed.getHeader("Set-Cookie").contains("Max-Age=0"), closed.getHeader("Set-Cookie"));
        // Signed out on the node, not only forgotten by the browser: the same cookie, kept, opens nothing.
        assertEquals(
                401,
                send(HttpMethod.GET, "/api/tasks/" + acmes, null, "Cookie", cookie)
                        .statusCode(),
                "a signed-out session is over");
        assertFalse(setCookie.contains("Secure"), "plain HTTP from no trusted proxy: " + setCookie);
    }

    /**
     * The token with the first character of its signature changed. Not the last: Base64 ignores the
     * last character's spare bits, so changing it may leave the signature as it was.
     */
    private static String forge(String token) {
        int at = token.lastIndexOf('.') + 1;
        return token.substring(0, at) + (token.charAt(at) == 'A' ? 'B' : 'A') + token.substring(at + 1);
    }
}
