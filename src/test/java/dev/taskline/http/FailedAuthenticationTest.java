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
        return start(trustedProxies, "X-Forwarded-For");
    }

    private static TestNode start(JsonArray trustedProxies, String forwardedHeader) throws Exception {
        JsonObject config = new JsonObject()
                .put(
                        "http",
                        new JsonObject().put("trustedProxies", trustedProxies).put("forwardedHeader", forwardedHeader))
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
            request.headers().add(headers[i], headers[i + 1]); // a name twice is two lines
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
            for (int i = 0; i < 3; i++) {
                assertEquals(
                        401,
                        get(node, "tl_b" + i, "X-Forwarded-For", "198.51.100.8, 127.0.0.5")
                                .statusCode(),
                        "another client through two proxies is not held for the first one's failures");
            }
            assertEquals(
                    429,
                    get(node, "tl_b3", "X-Forwarded-For", "198.51.100.8").statusCode(),
                    "the client behind two proxies was counted as itself, not as the nearer proxy");
            assertEquals(
                    401, get(node, "tl_c", "X-Forwarded-For", "198.51.100.9").statusCode(), "nor as the peer");
        }
    }

    @Test
    void what_the_proxy_did_not_write_is_the_clients_own_word() throws Exception {
        try (TestNode node = start(new JsonArray().add("127.0.0.1"))) {
            // The proxy appends to X-Forwarded-For: a Forwarded header, the lines before its own and
            // a name are the client's, and it is counted as the proxy's last line says.
            for (int i = 0; i < 3; i++) {
                assertEquals(
                        401,
                        get(
                                        node,
                                        "tl_d" + i,
                                        "Forwarded",
                                        "for=203.0.113." + i,
                                        "X-Forwarded-For",
                                        "203.0.113." + (50 + i),
                                        "X-Forwarded-For",
                                        "198.51.100.20")
                                .statusCode());
            }
            assertEquals(
                    429,
                    get(node, "tl_d3", "X-Forwarded-For", "198.51.100.20").statusCode(),
                    "three failures of one client, whatever it wrote before the proxy");
            for (int i = 0; i < 3; i++) {
                assertEquals(
                        401,
                        get(node, "tl_e" + i, "X-Forwarded-For", "dead.beef").statusCode(),
                        "a name is no address (nor is it looked up)");
            }
            assertEquals(
                    429,
                    get(node, "tl_e3", "X-Forwarded-For", "face.cafe").statusCode(),
                    "those were counted as the peer's");
        }
    }

    @Test
    void proxies_that_speak_forwarded_name_the_client_there() throws Exception {
        try (TestNode node = start(new JsonArray().add("127.0.0.1"), "Forwarded")) {
            for (int i = 0; i < 3; i++) {
                assertEquals(
                        401,
                        get(
                                        node,
                                        "tl_f" + i,
                                        "X-Forwarded-For",
                                        "203.0.113." + i,
                                        "Forwarded",
                                        "for=\"[2001:db8::17]:4711\";proto=https")
                                .statusCode());
            }
            assertEquals(
                    429,
                    get(node, "tl_f3", "Forwarded", "for=192.0.2.1, for=\"[2001:db8::17]\"")
                            .statusCode());
            assertEquals(
                    401,
                    get(node, "tl_g", "Forwarded", "for=\"[2001:db8::18]\"").statusCode());
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
            HttpResponse<Buffer> forged = await(trusting.http
                    .post("/api/session")
                    .putHeader("Authorization", "Bearer " + SECRET)
                    .putHeader("X-Forwarded-Proto", "https, http")
                    .send());
            assertFalse(forged.getHeader("Set-Cookie").contains("Secure"), "the nearest proxy said http");
        }
    }

    @Test
    void a_session_opens_no_other_session() throws Exception {
        try (TestNode node = start(new JsonArray())) {
            HttpResponse<Buffer> opened = await(node.http
                    .post("/api/session")
                    .putHeader("Authorization", "Bearer " + SECRET)
                    .send());
            String cookie = opened.getHeader("Set-Cookie").split(";")[0];
            HttpResponse<Buffer> again = await(node.http
                    .post("/api/session")
                    .putHeader("Cookie", cookie)
                    .putHeader("X-CSRF-Token", opened.bodyAsJsonObject().getString("csrf"))
                    .send());
            assertEquals(400, again.statusCode(), again.bodyAsString());
            assertEquals(null, again.getHeader("Set-Cookie"));
        }
    }

    @Test
    void a_key_given_a_new_secret_ends_the_sessions_of_the_old_one() throws Exception {
        String db = TestPostgres.newDatabase();
        String cookie;
        try (TestNode before = TestNode.start(db, keyConfig(SECRET))) {
            cookie = await(before.http
                            .post("/api/session")
                            .putHeader("Authorization", "Bearer " + SECRET)
                            .send())
                    .getHeader("Set-Cookie")
                    .split(";")[0];
            assertEquals(
                    200,
                    await(before.http
                                    .get("/api/stats")
                                    .putHeader("Cookie", cookie)
                                    .send())
                            .statusCode());
        }
        // The operator rotates the key: the same id, a new secret's hash; the node secret is the journal's.
        try (TestNode after = TestNode.start(db, keyConfig(ApiKeys.newSecret(new SecureRandom())))) {
            assertEquals(
                    401,
                    await(after.http
                                    .get("/api/stats")
                                    .putHeader("Cookie", cookie)
                                    .send())
                            .statusCode(),
                    "whoever held the old secret is out");
        }
    }

    private static String keyConfig(String secret) {
        return new JsonObject()
                .put(
                        "auth",
                        new JsonObject()
                                .put(
                                        "keys",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("id", "reader")
                                                        .put("hash", ApiKeys.hash(secret))
                                                        .put("scopes", new JsonArray().add("read")))))
                .encode();
    }

    @Test
    void a_session_signed_out_on_one_node_is_over_on_another() throws Exception {
        String db = TestPostgres.newDatabase();
        try (TestNode one = TestNode.start(db, keyConfig(SECRET));
                TestNode two = TestNode.start(db, keyConfig(SECRET))) {
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
