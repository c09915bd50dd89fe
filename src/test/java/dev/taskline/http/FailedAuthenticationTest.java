package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.auth.ApiKeys;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import java.security.SecureRandom;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/**
 * Failed authentications are counted per client address and per key presented: past the bound a
 * failing request is answered 429, a key that holds is never refused for others' failures, and
 * behind a trusted proxy the client is the one it names.
 */
class FailedAuthenticationTest {

    private static final String SECRET = ApiKeys.newSecret(new SecureRandom());

    private static TestNode start(JsonArray trustedProxies) throws Exception {
        JsonObject config = new JsonObject()
                .put("http", new JsonObject().put("trustedProxies", trustedProxies))
                .put(
                        "auth",
                        new JsonObject()
                                .put("maxFailuresPerMinute", 3)
                                .put(
                                        "keys",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("id", "reader")
                                                        .put("hash", ApiKeys.hash(SECRET))
                                                        .put("scopes", new JsonArray().add("read")))));
        return TestNode.start(TestPostgres.newDatabase(), config.encode());
    }

    private static HttpResponse<Buffer> get(TestNode node, String key, String... headers) throws Exception {
        HttpRequest<Buffer> request = node.http.get("/api/stats").putHeader("Authorization", "Bearer " + key);
        for (int i = 0; i + 1 < headers.length; i += 2) {
            request.putHeader(headers[i], headers[i + 1]);
        }
        return await(request.send());
    }

    @Test
    void past_the_bound_failures_get_429_and_a_good_key_from_the_same_address_still_gets_in() throws Exception {
        try (TestNode node = start(new JsonArray())) {
            for (int i = 0; i < 3; i++) {
                HttpResponse<Buffer> refused = get(node, "tl_guess" + i);
                assertEquals(401, refused.statusCode(), refused.bodyAsString());
            }
            HttpResponse<Buffer> blocked = get(node, "tl_guess3");
            assertEquals(429, blocked.statusCode(), blocked.bodyAsString());
            long retryAfter = Long.parseLong(blocked.getHeader("Retry-After"));
            assertTrue(retryAfter >= 1 && retryAfter <= 60, "Retry-After " + retryAfter);
            assertEquals(
                    "urn:taskline:problem:too-many-failures",
                    blocked.bodyAsJsonObject().getString("type"));
            assertEquals(200, get(node, SECRET).statusCode(), "a key that holds is not refused for others' failures");

            node.clock.advance(Duration.ofSeconds(61));
            assertEquals(401, get(node, "tl_guess4").statusCode(), "a new minute");
            assertEquals(200, node.get("/health/ready").statusCode(), "health stays open");
        }
    }

    @Test
    void one_key_presented_from_many_addresses_is_counted_as_one() throws Exception {
        try (TestNode node = start(new JsonArray().add("127.0.0.1/32"))) {
            for (int i = 0; i < 3; i++) {
                assertEquals(
                        401,
                        get(node, "tl_stolen", "X-Forwarded-For", "10.0.0." + i).statusCode());
            }
            assertEquals(
                    429,
                    get(node, "tl_stolen", "X-Forwarded-For", "10.0.0.99").statusCode(),
                    "the key failed three times, whoever sent it");
            assertEquals(
                    401,
                    get(node, "tl_other", "X-Forwarded-For", "10.0.0.98").statusCode(),
                    "another key from another client is not");
        }
    }

    @Test
    void behind_a_trusted_proxy_each_client_is_counted_on_its_own() throws Exception {
        try (TestNode node = start(new JsonArray().add("127.0.0.0/8"))) {
            for (int i = 0; i < 3; i++) {
                assertEquals(
                        401,
                        get(node, "tl_a" + i, "X-Forwarded-For", "198.51.100.7").statusCode());
            }
            assertEquals(
                    429, get(node, "tl_a3", "X-Forwarded-For", "198.51.100.7").statusCode());
            assertEquals(
                    401,
                    get(node, "tl_b", "X-Forwarded-For", "198.51.100.8, 127.0.0.5")
                            .statusCode(),
                    "another client through two proxies is not held for the first one's failures");
            assertEquals(
                    401,
                    get(node, "tl_c", "Forwarded", "for=\"[2001:db8::17]:4711\";proto=https")
                            .statusCode(),
                    "nor is one the standard header names");
        }
    }

    @Test
    void from_a_peer_that_is_no_trusted_proxy_the_forwarding_headers_count_for_nothing() throws Exception {
        try (TestNode node = start(new JsonArray().add("192.0.2.0/24"))) {
            for (int i = 0; i < 3; i++) {
                assertEquals(
                        401,
                        get(node, "tl_a" + i, "X-Forwarded-For", "198.51.100." + i)
                                .statusCode());
            }
            assertEquals(
                    429,
                    get(node, "tl_b", "X-Forwarded-For", "198.51.100.200").statusCode(),
                    "one peer, whatever it says it forwards");
        }
    }

    @Test
    void a_trusted_proxy_that_says_https_gets_a_secure_cookie_and_hsts() throws Exception {
        try (TestNode trusting = start(new JsonArray().add("127.0.0.1"));
                TestNode other = start(new JsonArray())) {
            for (TestNode node : new TestNode[] {trusting, other}) {
                HttpResponse<Buffer> opened = await(node.http
                        .post("/api/session")
                        .putHeader("Authorization", "Bearer " + SECRET)
                        .putHeader("X-Forwarded-Proto", "https")
                        .send());
                assertEquals(200, opened.statusCode(), opened.bodyAsString());
                String cookie = opened.getHeader("Set-Cookie");
                if (node == trusting) {
                    assertTrue(cookie.contains("Secure"), cookie);
                    assertEquals("max-age=31536000", opened.getHeader("Strict-Transport-Security"));
                } else {
                    assertFalse(cookie.contains("Secure"), "a client's own X-Forwarded-Proto: " + cookie);
                    assertEquals(null, opened.getHeader("Strict-Transport-Security"));
                }
            }
        }
    }

    @Test
    void a_session_signed_out_on_one_node_is_over_on_another() throws Exception {
        String db = TestPostgres.newDatabase();
        JsonObject config = new JsonObject()
                .put(
                        "auth",
                        new JsonObject()
                                .put(
                                        "keys",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("id", "reader")
                                                        .put("hash", ApiKeys.hash(SECRET))
                                                        .put("scopes", new JsonArray().add("read")))));
        try (TestNode one = TestNode.start(db, config.encode());
                TestNode two = TestNode.start(db, config.encode())) {
            HttpResponse<Buffer> opened = await(one.http
                    .post("/api/session")
                    .putHeader("Authorization", "Bearer " + SECRET)
                    .send());
            String cookie = opened.getHeader("Set-Cookie").split(";")[0];
            String csrf = opened.bodyAsJsonObject().getString("csrf");
            assertEquals(
                    200,
                    await(two.http.get("/api/stats").putHeader("Cookie", cookie).send())
                            .statusCode());
            assertEquals(
                    204,
                    await(one.http
                                    .delete("/api/session")
                                    .putHeader("Cookie", cookie)
                                    .putHeader("X-CSRF-Token", csrf)
                                    .send())
                            .statusCode());
            await(two.node.passes().keys().refresh()); // what its timer does every second
            assertEquals(
                    401,
                    await(two.http.get("/api/stats").putHeader("Cookie", cookie).send())
                            .statusCode(),
                    "the other node refuses it too");
        }
    }
}
