package dev.taskline.workflow;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.auth.ApiKeys;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.security.SecureRandom;
import java.time.Duration;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Durable steps for workers in any language, over HTTP: steps written with the lease and fenced
 * by it, the steps done handed back with the next claim, attempts ended suspended by complete,
 * compensation told in the claim, and tenants kept apart (a tenant's signal and event reach only
 * its own tasks).
 */
class DurableRemoteTest {

    private static final Map<String, String> SECRETS = new HashMap<>();
    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        JsonArray keys = new JsonArray();
        Map<String, JsonObject> defined = Map.of(
                "acme", key("acme", "submit", "read"),
                "globex", key("globex", "submit", "read"),
                "worker", key(null, "work"),
                "admin", key(null, "admin"));
        for (Map.Entry<String, JsonObject> e : defined.entrySet()) {
            String secret = SECRETS.computeIfAbsent(e.getKey(), k -> ApiKeys.newSecret(new SecureRandom()));
            keys.add(e.getValue().copy().put("id", e.getKey()).put("hash", ApiKeys.hash(secret)));
        }
        node = TestNode.start(
                TestPostgres.newDatabase(),
                new JsonObject()
                        .put(
                                "queues",
                                new JsonObject()
                                        .put(
                                                "remote",
                                                new JsonObject()
                                                        .put("remote", true)
                                                        // The tests leave attempts running: room for all.
                                                        .put("slots", 64)
                                                        .put("leaseMs", 5_000)
                                                        .put("heartbeatMs", 1_000)))
                        .put("auth", new JsonObject().put("keys", keys).put("maxFailuresPerMinute", 1_000_000))
                        .encode(),
                new MutableClock());
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    private static JsonObject key(String tenant, String... scopes) {
        JsonObject key = new JsonObject().put("scopes", new JsonArray(List.of((Object[]) scopes)));
        return tenant == null ? key : key.put("tenant", tenant);
    }

    private static HttpResponse<Buffer> post(String as, String path, JsonObject body) throws Exception {
        return await(node.http
                .post(path)
                .putHeader("Authorization", "Bearer " + SECRETS.get(as))
                .sendJsonObject(body));
    }

    private static JsonObject get(String as, String path) throws Exception {
        HttpResponse<Buffer> answer = await(node.http
                .get(path)
                .putHeader("Authorization", "Bearer " + SECRETS.get(as))
                .send());
        assertEquals(200, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject();
    }

    private static String submit(String as, String type) throws Exception {
        HttpResponse<Buffer> answer =
                post(as, "/api/tasks", new JsonObject().put("type", type).put("queue", "remote"));
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }

    /** Tasks claimed while looking for another, kept for the test that asks for them. */
    private static final Map<String, JsonObject> CLAIMED = new HashMap<>();

    /** Claims until the task {@code id} is handed over (others claimed on the way are kept for later). */
    private static JsonObject claim(String id) throws Exception {
        node.until(
                () -> {
                    if (CLAIMED.containsKey(id)) {
                        return true;
                    }
                    HttpResponse<Buffer> claim = post(
                            "worker",
                            "/api/queues/remote/claim",
                            new JsonObject().put("worker", "w-1").put("max", 10).put("waitMs", 200));
                    for (Object o : claim.bodyAsJsonObject().getJsonArray("tasks")) {
                        JsonObject task = (JsonObject) o;
                        CLAIMED.put(task.getString("id"), task);
                    }
                    return CLAIMED.containsKey(id);
                },
                () -> "task " + id + " claimed");
        return CLAIMED.remove(id);
    }

    private static String lease(JsonObject claimed) {
        return claimed.getJsonObject("lease").getString("token");
    }

    private static HttpResponse<Buffer> step(String id, String lease, String name, Object result) throws Exception {
        return post(
                "worker",
                "/api/tasks/" + id + "/steps/" + name,
                new JsonObject().put("lease", lease).put("result", result));
    }

    private static HttpResponse<Buffer> suspend(String id, String lease, JsonObject suspend) throws Exception {
        return post(
                "worker",
                "/api/tasks/" + id + "/complete",
                new JsonObject().put("lease", lease).put("suspend", suspend));
    }

    @Test
    void a_remote_worker_writes_steps_suspends_and_gets_its_steps_back_with_the_next_claim() throws Exception {
        String id = submit("acme", "order");
        JsonObject first = claim(id);
        assertFalse(first.containsKey("steps"), "a first attempt has none to read");
        HttpResponse<Buffer> wrote = step(id, lease(first), "reserve", new JsonObject().put("r", 1));
        assertEquals(200, wrote.statusCode(), wrote.bodyAsString());
        assertTrue(wrote.bodyAsJsonObject().getBoolean("first"));
        HttpResponse<Buffer> again = step(id, lease(first), "reserve", new JsonObject().put("r", 2));
        assertFalse(again.bodyAsJsonObject().getBoolean("first"));
        assertEquals(1, again.bodyAsJsonObject().getJsonObject("result").getInteger("r"), "the first result kept");
        assertEquals(200, step(id, lease(first), "nothing", null).statusCode(), "null is a result");

        HttpResponse<Buffer> suspended = suspend(
                id, lease(first), new JsonObject().put("signal", "payment").put("timeoutMs", 60_000));
        assertEquals(200, suspended.statusCode(), suspended.bodyAsString());
        assertEquals("pending", suspended.bodyAsJsonObject().getString("state"));
        assertTrue(suspended.bodyAsJsonObject().getBoolean("suspended"));
        assertEquals(
                202,
                post(
                                "acme",
                                "/api/tasks/" + id + "/signals/payment",
                                new JsonObject().put("payload", new JsonObject().put("paid", true)))
                        .statusCode());

        JsonObject second = claim(id);
        JsonObject steps = second.getJsonObject("steps");
        assertEquals(1, steps.getJsonObject("reserve").getInteger("r"));
        assertTrue(steps.containsKey("nothing") && steps.getValue("nothing") == null);
        assertTrue(steps.getJsonObject("payment").getJsonObject("payload").getBoolean("paid"));
        assertEquals(1, second.getInteger("attempt"), "a suspend spends no attempt");
        assertEquals(
                200,
                post(
                                "worker",
                                "/api/tasks/" + id + "/complete",
                                new JsonObject().put("lease", lease(second)).put("result", new JsonObject()))
                        .statusCode());
        assertEquals("succeeded", get("acme", "/api/tasks/" + id).getString("state"));
    }

    @Test
    void a_step_or_suspend_with_a_lease_taken_over_is_fenced_and_changes_nothing() throws Exception {
        String id = submit("acme", "order");
        JsonObject first = claim(id);
        assertEquals(200, step(id, lease(first), "a", 1).statusCode());
        node.clock.advance(Duration.ofSeconds(6));
        // The lapsed lease goes back to pending, this node lets go of it, and pages it in again.
        await(node.node.passes().recovery().runOnce());
        await(node.node.passes().remote().runOnce());
        await(node.node.passes().recovery().runOnce());
        JsonObject taken = claim(id);

        HttpResponse<Buffer> late = step(id, lease(first), "b", 1);
        assertEquals(409, late.statusCode(), late.bodyAsString());
        assertTrue(late.bodyAsJsonObject().getString("type").endsWith("lease-lost"));
        HttpResponse<Buffer> lateSuspend = suspend(id, lease(first), new JsonObject().put("signal", "x"));
        assertEquals(409, lateSuspend.statusCode(), lateSuspend.bodyAsString());
        HttpResponse<Buffer> lateRewrite = step(id, lease(first), "a", 2);
        assertEquals(409, lateRewrite.statusCode());

        JsonObject task = get("acme", "/api/tasks/" + id);
        assertEquals("running", task.getString("state"));
        assertEquals(List.of("a"), DurableStepsTest.stepNames(task));
        assertEquals(1, taken.getJsonObject("steps").getInteger("a"), "the new holder reads the step done");
        assertEquals(200, step(id, lease(taken), "b", 2).statusCode());
    }

    @Test
    void a_claim_handed_back_after_its_wait_ended_is_claimed_again_with_its_steps() throws Exception {
        String id = submit("acme", "handed-back");
        JsonObject first = claim(id);
        assertEquals(200, step(id, lease(first), "reserve", "r-1").statusCode());
        assertEquals(
                200,
                suspend(id, lease(first), new JsonObject().put("signal", "go")).statusCode());
        assertEquals(
                202,
                post("acme", "/api/tasks/" + id + "/signals/go", new JsonObject())
                        .statusCode());
        // A claim whose answer never reached its worker (it went away): its lease is handed back.
        List<dev.taskline.worker.RemoteWorkers.Claimed> lost = List.of();
        for (int i = 0;
                i < 100 && lost.stream().noneMatch(c -> c.task().id().toString().equals(id));
                i++) {
            lost = await(node.node
                    .passes()
                    .remote()
                    .claim(
                            "remote",
                            "w-gone",
                            10,
                            dev.taskline.worker.RemoteWorkers.Want.ANY,
                            200,
                            io.vertx.core.Promise.<Void>promise().future()));
            await(node.node.passes().remote().handBack(lost));
        }
        assertTrue(lost.stream().anyMatch(c -> c.task().id().toString().equals(id)), "claimed, then handed back");
        await(node.node.passes().recovery().runOnce());
        JsonObject again = claim(id);
        assertEquals("r-1", again.getJsonObject("steps").getString("reserve"));
        assertTrue(again.getJsonObject("steps").containsKey("go"), "the wait it ended is done: " + again.encode());
        assertEquals(
                200,
                post(
                                "worker",
                                "/api/tasks/" + id + "/complete",
                                new JsonObject().put("lease", lease(again)).put("result", new JsonObject()))
                        .statusCode());
    }

    @Test
    void a_compensating_cancel_is_told_in_the_claim_and_the_success_ends_the_task_cancelled() throws Exception {
        String id = submit("acme", "order");
        JsonObject first = claim(id);
        assertEquals(200, step(id, lease(first), "reserve", "r-1").statusCode());
        assertEquals(
                200,
                suspend(id, lease(first), new JsonObject().put("step", "nap").put("sleepMs", 3_600_000))
                        .statusCode());
        HttpResponse<Buffer> cancel =
                post("acme", "/api/tasks/" + id + "/cancel", new JsonObject().put("compensate", true));
        assertEquals(202, cancel.statusCode(), cancel.bodyAsString());
        JsonObject undo = claim(id);
        assertTrue(undo.getBoolean("compensating"));
        assertEquals("r-1", undo.getJsonObject("steps").getString("reserve"));
        assertEquals(200, step(id, lease(undo), "release", "done").statusCode());
        HttpResponse<Buffer> end = post(
                "worker",
                "/api/tasks/" + id + "/complete",
                new JsonObject().put("lease", lease(undo)).put("result", new JsonObject()));
        assertEquals("cancelled", end.bodyAsJsonObject().getString("state"));
    }

    @Test
    void bad_steps_and_suspends_are_refused_and_leave_the_attempt_running() throws Exception {
        String id = submit("acme", "order");
        String lease = lease(claim(id));
        List<JsonObject> bad = List.of(
                new JsonObject(),
                new JsonObject().put("signal", "a").put("sleepMs", 1),
                new JsonObject().put("sleepMs", 1_000),
                new JsonObject().put("step", "s").put("sleepMs", -1),
                new JsonObject().put("until", "tomorrow"),
                new JsonObject().put("until", "+1000000000-01-01T00:00:00Z"),
                new JsonObject().put("until", "-1000000000-01-01T00:00:00Z"),
                new JsonObject().put("until", "9000-01-01T00:00:00Z"),
                new JsonObject().put("signal", "a").put("timeoutMs", Long.MAX_VALUE),
                new JsonObject().put("until", "2030-01-01T00:00:00Z").put("timeoutMs", 5),
                new JsonObject()
                        .put(
                                "event",
                                new JsonObject()
                                        .put("name", "e")
                                        .put("field", "orderId")
                                        .put("value", 1)),
                new JsonObject()
                        .put(
                                "event",
                                new JsonObject()
                                        .put("name", "e")
                                        .put("field", "data.x")
                                        .put("value", new JsonObject())),
                new JsonObject().put("signal", "x".repeat(201)),
                new JsonObject().put("signal", "a").put("other", 1));
        for (JsonObject suspend : bad) {
            HttpResponse<Buffer> answer = suspend(id, lease, suspend);
            assertEquals(422, answer.statusCode(), suspend.encode() + ": " + answer.bodyAsString());
        }
        HttpResponse<Buffer> both = post(
                "worker",
                "/api/tasks/" + id + "/complete",
                new JsonObject()
                        .put("lease", lease)
                        .put("result", new JsonObject())
                        .put("suspend", new JsonObject().put("signal", "a")));
        assertEquals(422, both.statusCode());
        assertEquals(
                422,
                post("worker", "/api/tasks/" + id + "/steps/a", new JsonObject().put("lease", lease))
                        .statusCode(),
                "a step without a result");
        assertEquals(422, step(id, lease, "x".repeat(201), 1).statusCode());
        JsonObject task = get("acme", "/api/tasks/" + id);
        assertEquals("running", task.getString("state"));
        assertEquals(0, task.getJsonArray("steps").size());
        assertNull(task.getValue("wait"));
    }

    @Test
    void a_tenants_signals_and_events_reach_only_its_own_tasks() throws Exception {
        String acmes = submit("acme", "order");
        String globexs = submit("globex", "order");
        for (String id : List.of(acmes, globexs)) {
            JsonObject claimed = claim(id);
            JsonObject wait = new JsonObject()
                    .put(
                            "event",
                            new JsonObject()
                                    .put("name", "order.paid")
                                    .put("field", "data.orderId")
                                    .put("value", "o-9"));
            assertEquals(200, suspend(id, lease(claimed), wait).statusCode());
        }
        HttpResponse<Buffer> foreign = post("globex", "/api/tasks/" + acmes + "/signals/payment", new JsonObject());
        assertEquals(404, foreign.statusCode(), "another tenant's task is unknown");
        assertEquals(
                0, get("acme", "/api/tasks/" + acmes).getJsonArray("signals").size());

        HttpResponse<Buffer> event = post(
                "globex",
                "/api/events",
                new JsonObject().put("name", "order.paid").put("data", new JsonObject().put("orderId", "o-9")));
        assertEquals(202, event.statusCode(), event.bodyAsString());
        assertEquals(1, event.bodyAsJsonObject().getInteger("delivered"), "globex's own task only");
        assertTrue(get("acme", "/api/tasks/" + acmes).getValue("wait") != null, "acme's task waits on");
        HttpResponse<Buffer> sameIdOtherTenant = post(
                "acme",
                "/api/events",
                new JsonObject()
                        .put("name", "order.paid")
                        .put("id", event.bodyAsJsonObject().getString("id"))
                        .put("data", new JsonObject().put("orderId", "o-9")));
        assertEquals(1, sameIdOtherTenant.bodyAsJsonObject().getInteger("delivered"), "ids are per tenant");
    }
}
