package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.auth.ApiKeys;
import dev.taskline.testing.SseClient;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What one caller may hold of what a node has a fixed amount of: a tenant its share of the open
 * streams and of a queue's waiting claims (a quarter here: 1 of 4 streams, 2 of 8 claims), a stream
 * token one stream at a time. Past it, 429; keys that see every tenant are held to the node's
 * maximum alone.
 */
class SharesTest {

    private static final Map<String, String> SECRETS = new ConcurrentHashMap<>();
    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = startNode();
    }

    private static TestNode startNode() throws Exception {
        JsonArray keys = new JsonArray();
        Map<String, JsonObject> defined = Map.of(
                "acme", key("acme", "submit", "read"),
                "globex", key("globex", "submit", "read"),
                "admin", key(null, "admin"),
                "acme-worker", key("acme", "work"),
                "any-worker", key(null, "work"));
        for (Map.Entry<String, JsonObject> e : defined.entrySet()) {
            String secret = SECRETS.computeIfAbsent(e.getKey(), k -> ApiKeys.newSecret(new SecureRandom()));
            keys.add(e.getValue().copy().put("id", e.getKey()).put("hash", ApiKeys.hash(secret)));
        }
        return TestNode.start(
                TestPostgres.newDatabase(),
                new JsonObject()
                        .put(
                                "http",
                                new JsonObject()
                                        .put("maxStreams", 4)
                                        .put("maxWaitingClaims", 8)
                                        .put("tenantShare", 0.25))
                        .put("queues", new JsonObject().put("remote", new JsonObject().put("remote", true)))
                        .put("auth", new JsonObject().put("keys", keys).put("maxFailuresPerMinute", 1_000_000))
                        .encode());
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    private static JsonObject key(String tenant, String... scopes) {
        JsonObject key = new JsonObject().put("scopes", new JsonArray(List.of((Object[]) scopes)));
        return tenant == null ? key : key.put("tenant", tenant);
    }

    private static Map<String, String> as(String key) {
        return Map.of("Authorization", "Bearer " + SECRETS.get(key));
    }

    /** A task of {@code key}'s that stays pending for the test: its stream stays open. */
    private static JsonObject pendingTask(String key) throws Exception {
        HttpResponse<Buffer> answer = await(node.http
                .post("/api/tasks")
                .putHeader("Authorization", "Bearer " + SECRETS.get(key))
                .sendJsonObject(new JsonObject().put("type", "sleep").put("delayMs", 3_600_000)));
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject();
    }

    private static String events(JsonObject task) {
        return "/api/tasks/" + task.getString("id") + "/events";
    }

    @Test
    void a_tenant_holds_its_share_of_the_streams_and_a_key_of_every_tenant_the_rest() throws Exception {
        int port = node.node.httpPort();
        JsonObject acmes = pendingTask("acme");
        JsonObject globexs = pendingTask("globex");
        List<SseClient> open = new ArrayList<>();
        try {
            open.add(SseClient.open(node.vertx, port, events(acmes), null, as("acme")));
            assertEquals(429, SseClient.status(node.vertx, port, events(acmes), as("acme")), "acme's share is one");
            open.add(SseClient.open(node.vertx, port, events(globexs), null, as("globex")));
            open.add(SseClient.open(node.vertx, port, events(acmes), null, as("admin")));
            open.add(SseClient.open(node.vertx, port, events(acmes), null, as("admin")));
            assertEquals(
                    503, SseClient.status(node.vertx, port, events(acmes), as("admin")), "the node's four are open");
        } finally {
            open.forEach(SseClient::close);
        }
        node.until(
                () -> SseClient.status(node.vertx, port, events(acmes), as("acme")) == 200,
                () -> "acme's stream closed, it may open one again");
    }

    @Test
    void a_stream_token_opens_one_stream_at_a_time() throws Exception {
        int port = node.node.httpPort();
        String url = pendingTask("globex").getString("eventsUrl");
        try (SseClient first = SseClient.open(node.vertx, port, url, null)) {
            assertEquals(429, SseClient.status(node.vertx, port, url), "the token's one stream is open");
        }
        node.until(() -> SseClient.status(node.vertx, port, url) == 200, () -> "its stream closed, it may open one");
    }

    @Test
    void stream_tokens_count_against_their_tenant_s_share_and_another_tenant_is_served() throws Exception {
        int port = node.node.httpPort();
        JsonObject acmes = pendingTask("acme");
        // Each read of a task mints a token of its own: none of them is a way past acme's share.
        String firstUrl = pendingTask("acme").getString("eventsUrl");
        String secondUrl = pendingTask("acme").getString("eventsUrl");
        List<SseClient> open = new ArrayList<>();
        try {
            open.add(SseClient.open(node.vertx, port, firstUrl, null));
            assertEquals(429, SseClient.status(node.vertx, port, secondUrl), "acme's one stream is open, by a token");
            assertEquals(429, SseClient.status(node.vertx, port, events(acmes), as("acme")), "and by a key");
            open.add(SseClient.open(node.vertx, port, events(pendingTask("globex")), null, as("globex")));
        } finally {
            open.forEach(SseClient::close);
        }
        node.until(
                () -> SseClient.status(node.vertx, port, secondUrl) == 200,
                () -> "acme's stream closed, its token may open one again");
    }

    @Test
    void a_tenant_holds_its_share_of_a_queues_waiting_claims() throws Exception {
        // A node of its own: its waiting claims are ended by draining it.
        try (TestNode node = startNode()) {
            claims(node);
        }
    }

    private static void claims(TestNode node) throws Exception {
        JsonObject claim = new JsonObject().put("worker", "w").put("waitMs", 30_000);
        List<Future<HttpResponse<Buffer>>> waiting = new ArrayList<>();
        for (int i = 0; i < 2; i++) {
            waiting.add(node.http
                    .post("/api/queues/remote/claim")
                    .putHeader("Authorization", "Bearer " + SECRETS.get("acme-worker"))
                    .sendJsonObject(claim));
        }
        node.until(() -> await(node.node.passes().remote().waiting("remote")) == 2, () -> "acme's two claims wait");
        HttpResponse<Buffer> third = await(node.http
                .post("/api/queues/remote/claim")
                .putHeader("Authorization", "Bearer " + SECRETS.get("acme-worker"))
                .sendJsonObject(claim));
        assertEquals(429, third.statusCode(), third.bodyAsString());
        assertEquals(
                "urn:taskline:problem:share-exceeded", third.bodyAsJsonObject().getString("type"));
        Future<HttpResponse<Buffer>> anyones = node.http
                .post("/api/queues/remote/claim")
                .putHeader("Authorization", "Bearer " + SECRETS.get("any-worker"))
                .sendJsonObject(claim);
        node.until(
                () -> await(node.node.passes().remote().waiting("remote")) == 3,
                () -> "a key of every tenant waits beside them");
        // Drained, the node answers every waiting claim with nothing.
        await(node.node.passes().remote().drain());
        for (Future<HttpResponse<Buffer>> answer : List.of(waiting.get(0), waiting.get(1), anyones)) {
            assertEquals(200, await(answer).statusCode());
        }
    }
}
