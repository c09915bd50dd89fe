package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
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
import org.junit.jupiter.api.Test;

/** An admin issues and revokes keys through the API; every node of the journal learns of it. */
class KeysApiTest {

    private static HttpResponse<Buffer> call(TestNode node, String method, String path, String secret, JsonObject body)
            throws Exception {
        HttpRequest<Buffer> request = node.http.request(io.vertx.core.http.HttpMethod.valueOf(method), path);
        if (secret != null) {
            request.putHeader("Authorization", "Bearer " + secret);
        }
        return await(body == null ? request.send() : request.sendJsonObject(body));
    }

    @Test
    void an_issued_key_works_at_once_on_every_node_and_a_revoked_one_nowhere() throws Exception {
        String admin = ApiKeys.newSecret(new SecureRandom());
        String config = new JsonObject()
                .put(
                        "auth",
                        new JsonObject()
                                .put(
                                        "keys",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("id", "ops")
                                                        .put("hash", ApiKeys.hash(admin))
                                                        .put("scopes", new JsonArray().add("admin")))))
                .encode();
        String db = TestPostgres.newDatabase();
        try (TestNode one = TestNode.start(db, config);
                TestNode two = TestNode.start(db, config)) {
            HttpResponse<Buffer> issued = call(
                    one,
                    "POST",
                    "/api/keys",
                    admin,
                    new JsonObject()
                            .put("id", "acme-ci")
                            .put("tenant", "acme")
                            .put("scopes", new JsonArray().add("submit").add("read")));
            assertEquals(201, issued.statusCode(), issued.bodyAsString());
            String secret = issued.bodyAsJsonObject().getString("secret");
            assertTrue(secret.startsWith("tl_"));
            assertEquals(
                    200,
                    call(one, "GET", "/api/stats", secret, null).statusCode(),
                    "the issuing node knows it at once");
            await(two.node.passes().keys().refresh()); // what its timer does every second
            assertEquals(
                    200,
                    call(two, "GET", "/api/stats", secret, null).statusCode(),
                    "and the other node after its read");

            JsonArray listed = call(one, "GET", "/api/keys", admin, null)
                    .bodyAsJsonObject()
                    .getJsonArray("keys");
            assertEquals(2, listed.size(), listed.encode());
            assertTrue(
                    listed.encode().indexOf(secret) < 0 && listed.encode().indexOf("sha256") < 0, "no secret, no hash");
            JsonObject acme = listed.getJsonObject(1);
            assertEquals("api", acme.getString("source"));
            assertEquals("ops", acme.getString("createdBy"), "the key that issued it is kept");
            assertEquals("config", listed.getJsonObject(0).getString("source"));

            assertEquals(
                    409,
                    call(
                                    one,
                                    "POST",
                                    "/api/keys",
                                    admin,
                                    new JsonObject().put("id", "acme-ci").put("scopes", new JsonArray().add("read")))
                            .statusCode(),
                    "an id is issued once");
            assertEquals(409, call(one, "DELETE", "/api/keys/ops", admin, null).statusCode(), "a config key stays");
            assertEquals(
                    422,
                    call(one, "POST", "/api/keys", admin, new JsonObject().put("scopes", new JsonArray().add("root")))
                            .statusCode());
            assertEquals(
                    403,
                    call(one, "POST", "/api/keys", secret, new JsonObject().put("scopes", new JsonArray().add("read")))
                            .statusCode(),
                    "only an admin issues keys");

            assertEquals(
                    204, call(one, "DELETE", "/api/keys/acme-ci", admin, null).statusCode());
            assertEquals(401, call(one, "GET", "/api/stats", secret, null).statusCode(), "revoked here at once");
            await(two.node.passes().keys().refresh());
            assertEquals(401, call(two, "GET", "/api/stats", secret, null).statusCode(), "and there within a second");
            assertEquals(
                    404, call(one, "DELETE", "/api/keys/acme-ci", admin, null).statusCode(), "revoked already");
            JsonObject revoked = call(one, "GET", "/api/keys", admin, null)
                    .bodyAsJsonObject()
                    .getJsonArray("keys")
                    .getJsonObject(1);
            assertTrue(revoked.getString("revokedAt") != null, revoked.encode());
            assertEquals("ops", revoked.getString("revokedBy"), "the key that revoked it is kept");
        }
    }

    @Test
    void on_a_node_without_keys_the_first_issued_key_turns_auth_on() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), "{}")) {
            assertEquals(200, call(node, "GET", "/api/stats", null, null).statusCode(), "open while no key exists");
            HttpResponse<Buffer> issued =
                    call(node, "POST", "/api/keys", null, new JsonObject().put("scopes", new JsonArray().add("admin")));
            assertEquals(201, issued.statusCode(), issued.bodyAsString());
            assertNull(issued.bodyAsJsonObject().getString("tenant"));
            assertEquals(
                    401,
                    call(node, "GET", "/api/stats", null, null).statusCode(),
                    "a key exists: every call names one");
            assertEquals(
                    200,
                    call(node, "GET", "/api/stats", issued.bodyAsJsonObject().getString("secret"), null)
                            .statusCode());
        }
    }
}
