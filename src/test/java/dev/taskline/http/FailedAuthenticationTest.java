package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.auth.ApiKeys;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.security.SecureRandom;
import java.time.Duration;
import org.junit.jupiter.api.Test;

/** A client address that fails to authenticate too often in a minute is answered 429, key or not. */
class FailedAuthenticationTest {

    @Test
    void past_the_bound_even_a_good_key_waits_out_the_minute() throws Exception {
        String secret = ApiKeys.newSecret(new SecureRandom());
        JsonObject config = new JsonObject()
                .put(
                        "auth",
                        new JsonObject()
                                .put("maxFailuresPerMinute", 3)
                                .put(
                                        "keys",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("id", "reader")
                                                        .put("hash", ApiKeys.hash(secret))
                                                        .put("scopes", new JsonArray().add("read")))));
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), config.encode())) {
            for (int i = 0; i < 3; i++) {
                assertEquals(401, get(node, "Bearer tl_guess" + i).statusCode());
            }
            HttpResponse<Buffer> blocked = get(node, "Bearer " + secret);
            assertEquals(429, blocked.statusCode(), blocked.bodyAsString());
            long retryAfter = Long.parseLong(blocked.getHeader("Retry-After"));
            assertTrue(retryAfter >= 1 && retryAfter <= 60, "Retry-After " + retryAfter);
            assertEquals(
                    "urn:taskline:problem:too-many-failures",
                    blocked.bodyAsJsonObject().getString("type"));

            node.clock.advance(Duration.ofSeconds(61));
            assertEquals(200, get(node, "Bearer " + secret).statusCode(), "a new minute");
            assertEquals(200, node.get("/health/ready").statusCode(), "health stays open");
        }
    }

    private static HttpResponse<Buffer> get(TestNode node, String authorization) throws Exception {
        return await(node.http
                .get("/api/stats")
                .putHeader("Authorization", authorization)
                .send());
    }
}
