package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assertions.fail;

import dev.taskline.auth.ApiKeys;
import dev.taskline.journal.PgUrl;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlConnection;
import java.security.SecureRandom;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
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
            HttpResponse<Buffer> deputy =
                    call(one, "POST", "/api/keys", admin, new JsonObject().put("scopes", new JsonArray().add("admin")));
            assertEquals(201, deputy.statusCode(), deputy.bodyAsString());
            String deputyId = deputy.bodyAsJsonObject().getString("id");
            assertEquals(
                    204,
                    call(
                                    one,
                                    "DELETE",
                                    "/api/keys/" + deputyId,
                                    deputy.bodyAsJsonObject().getString("secret"),
                                    null)
                            .statusCode(),
                    "an issued admin key may go, even by its own hand, while the config holds one");
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

    @Test
    void on_a_node_without_keys_a_first_key_that_is_no_admin_key_is_refused_and_nothing_changes() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), "{}")) {
            HttpResponse<Buffer> refused = call(
                    node,
                    "POST",
                    "/api/keys",
                    null,
                    new JsonObject()
                            .put("id", "acme-ci")
                            .put("tenant", "acme")
                            .put("scopes", new JsonArray().add("submit").add("read")));
            assertEquals(422, refused.statusCode(), refused.bodyAsString());
            JsonObject problem = refused.bodyAsJsonObject();
            assertEquals("urn:taskline:problem:key-refused", problem.getString("type"));
            assertTrue(problem.getString("detail").contains("admin key first"), problem.encode());
            assertEquals(200, call(node, "GET", "/api/stats", null, null).statusCode(), "auth is still off");
            assertEquals(
                    0,
                    call(node, "GET", "/api/keys", null, null)
                            .bodyAsJsonObject()
                            .getJsonArray("keys")
                            .size(),
                    "nothing was stored");

            // What the README shows: an admin key first, then the tenant's with it.
            HttpResponse<Buffer> ops = call(
                    node,
                    "POST",
                    "/api/keys",
                    null,
                    new JsonObject().put("id", "ops").put("scopes", new JsonArray().add("admin")));
            assertEquals(201, ops.statusCode(), ops.bodyAsString());
            String admin = ops.bodyAsJsonObject().getString("secret");
            HttpResponse<Buffer> acme = call(
                    node,
                    "POST",
                    "/api/keys",
                    admin,
                    new JsonObject()
                            .put("id", "acme-ci")
                            .put("tenant", "acme")
                            .put("scopes", new JsonArray().add("submit").add("read")));
            assertEquals(201, acme.statusCode(), acme.bodyAsString());
            assertEquals(
                    200,
                    call(node, "GET", "/api/stats", acme.bodyAsJsonObject().getString("secret"), null)
                            .statusCode());
            assertEquals(
                    204,
                    call(node, "DELETE", "/api/keys/acme-ci", admin, null).statusCode(),
                    "a tenant key goes as ever");
        }
    }

    @Test
    void the_last_admin_key_is_not_revoked_even_by_two_admins_revoking_each_other_at_once() throws Exception {
        String db = TestPostgres.newDatabase();
        try (TestNode node = TestNode.start(db, "{}")) {
            String a = call(node, "POST", "/api/keys", null, admin("ops-a"))
                    .bodyAsJsonObject()
                    .getString("secret");
            HttpResponse<Buffer> alone = call(node, "DELETE", "/api/keys/ops-a", a, null);
            assertEquals(409, alone.statusCode(), alone.bodyAsString());
            assertTrue(alone.bodyAsJsonObject().getString("detail").contains("last admin key"), alone.bodyAsString());
            assertEquals(200, call(node, "GET", "/api/keys", a, null).statusCode(), "and it still works");

            HttpResponse<Buffer> issued = call(node, "POST", "/api/keys", a, admin("ops-b"));
            assertEquals(201, issued.statusCode(), issued.bodyAsString());
            Pool pool = PgBuilder.pool()
                    .with(new PoolOptions().setMaxSize(2))
                    .connectingTo(PgUrl.parse(db))
                    .using(node.vertx)
                    .build();
            try {
                // ops-b's revocation of ops-a, in flight (not committed) when ops-a revokes ops-b.
                SqlConnection other = await(pool.getConnection());
                await(other.query("BEGIN").execute());
                await(other.query("UPDATE api_keys SET revoked_at = now(), revoked_by = 'ops-b' WHERE id = 'ops-a'")
                        .execute());
                Future<HttpResponse<Buffer>> byA = node.http
                        .delete("/api/keys/ops-b")
                        .putHeader("Authorization", "Bearer " + a)
                        .send();
                long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(30);
                while (await(pool.query("SELECT 1 FROM pg_stat_activity WHERE datname = current_database()"
                                                + " AND wait_event_type = 'Lock' AND query LIKE '%FOR UPDATE%'")
                                        .execute())
                                .size()
                        == 0) {
                    if (byA.isComplete()) {
                        fail("ops-b was revoked while ops-a's revocation was open: "
                                + byA.result().statusCode() + " " + byA.result().bodyAsString());
                    }
                    assertTrue(System.nanoTime() < deadline, "the revocation never waited for the other");
                    LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(10));
                }
                await(other.query("COMMIT").execute());
                await(other.close());
                HttpResponse<Buffer> refused = await(byA);
                assertEquals(409, refused.statusCode(), "ops-b is the last admin key now: " + refused.bodyAsString());
            } finally {
                await(pool.close());
            }
        }
    }

    private static JsonObject admin(String id) {
        return new JsonObject().put("id", id).put("scopes", new JsonArray().add("admin"));
    }

    private static Future<HttpResponse<Buffer>> delete(TestNode node, String id, String secret) {
        return node.http
                .delete("/api/keys/" + id)
                .putHeader("Authorization", "Bearer " + secret)
                .send();
    }
}
