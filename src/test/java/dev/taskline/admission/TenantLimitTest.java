package dev.taskline.admission;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.journal.Journal;
import dev.taskline.journal.Migrator;
import dev.taskline.journal.PgUrl;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A queue's tenant limit: one tenant (named by the Taskline-Tenant header) may have at most that
 * many unfinished tasks in the queue; past it, 429 with Retry-After and nothing journaled, while
 * other tenants and callers that name none go on. The one slot is held by a gate task, so what is
 * unfinished is known at every step.
 */
class TenantLimitTest {

    private static final String CONFIG =
            "{\"queues\": {\"default\": {\"slots\": 1, \"capacity\": 50, \"tenantLimit\": 3}}}";

    @Test
    void a_tenant_at_its_limit_gets_429_and_the_others_go_on() throws Exception {
        GateHandler.reset();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG)) {
            HttpResponse<Buffer> first = submit(node, "/api/batches", "acme", batch(3));
            assertEquals(202, first.statusCode(), first.bodyAsString());
            GateHandler.Call running = GateHandler.next(TestNode.WAIT);
            assertEquals(3, queue(node.getJson("/api/queues")).getInteger("tenantLimit"));
            String firstId = first.bodyAsJsonObject()
                    .getJsonArray("tasks")
                    .getJsonObject(0)
                    .getString("id");
            assertEquals("acme", node.getJson("/api/tasks/" + firstId).getString("tenant"));

            double refusalsBefore = node.metric("taskline_refusal_latency_seconds_count");
            HttpResponse<Buffer> refused = submit(node, "/api/tasks", "acme", gate());
            assertEquals(429, refused.statusCode(), refused.bodyAsString());
            assertEquals("application/problem+json", refused.getHeader("Content-Type"));
            long retryAfter = Long.parseLong(refused.getHeader("Retry-After"));
            assertEquals(RetryAfter.UNKNOWN_RATE_SECONDS, retryAfter, "nothing has finished yet: no rate to go by");
            JsonObject problem = refused.bodyAsJsonObject();
            assertEquals("urn:taskline:problem:tenant-limit", problem.getString("type"));
            assertEquals("acme", problem.getString("tenant"));
            assertEquals(3, problem.getInteger("limit"));
            assertEquals(3, problem.getInteger("unfinished"));
            assertEquals(1, problem.getInteger("requested"));
            assertEquals(retryAfter, problem.getLong("retryAfterSeconds"));
            assertEquals(429, submit(node, "/api/batches", "acme", batch(2)).statusCode(), "a batch is all or nothing");
            assertEquals(
                    3,
                    node.metric("taskline_tasks_rejected_total{queue=\"default\",reason=\"tenant_limit\"}"),
                    "three tasks refused: one, then a batch of two");
            assertEquals(
                    refusalsBefore + 2, node.metric("taskline_refusal_latency_seconds_count"), "both refusals timed");

            assertEquals(202, submit(node, "/api/batches", "globex", batch(3)).statusCode(), "a tenant of its own");
            assertEquals(202, submit(node, "/api/batches", null, batch(5)).statusCode(), "no tenant, no limit");
            assertEquals(
                    3 + 3 + 5,
                    node.getJson("/api/tasks?limit=1000").getJsonArray("tasks").size(),
                    "nothing of the refused submissions was journaled");

            // The running acme task ends: one place of acme's frees, and exactly one more fits.
            running.succeed(new JsonObject());
            node.until("/api/queues", q -> queue(q).getInteger("finished") == 1);
            assertEquals(202, submit(node, "/api/tasks", "acme", gate()).statusCode());
            assertEquals(429, submit(node, "/api/tasks", "acme", gate()).statusCode());

            drain(node, 3 + 3 + 5 + 1, 2 + 3 + 5 + 1);
        }
    }

    @Test
    void more_tasks_for_one_queue_than_its_tenant_limit_can_never_fit_and_get_422() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG)) {
            HttpResponse<Buffer> tooMany = submit(node, "/api/batches", "acme", batch(4));
            assertEquals(422, tooMany.statusCode(), tooMany.bodyAsString());
            assertTrue(tooMany.bodyAsString().contains("at most 3"), tooMany.bodyAsString());
            assertEquals(
                    0, node.getJson("/api/tasks?limit=10").getJsonArray("tasks").size());
        }
    }

    @Test
    void an_idempotency_key_belongs_to_its_tenant() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG)) {
            String acme = keyed(node, "acme").bodyAsJsonObject().getString("id");
            HttpResponse<Buffer> again = keyed(node, "acme");
            assertEquals(202, again.statusCode());
            assertEquals("true", again.getHeader("Idempotent-Replayed"));
            assertEquals(acme, again.bodyAsJsonObject().getString("id"));
            HttpResponse<Buffer> globex = keyed(node, "globex");
            assertEquals(202, globex.statusCode(), "the same key of another tenant is another request");
            assertTrue(globex.getHeader("Idempotent-Replayed") == null, "not a replay");
            assertTrue(!acme.equals(globex.bodyAsJsonObject().getString("id")));
            HttpResponse<Buffer> none = keyed(node, null);
            assertTrue(!acme.equals(none.bodyAsJsonObject().getString("id")), "nor is it without a tenant");
            node.waitForState(acme, "succeeded");
        }
    }

    private static HttpResponse<Buffer> keyed(TestNode node, String tenant) throws Exception {
        HttpRequest<Buffer> request = node.http
                .post("/api/tasks")
                .putHeader("Content-Type", "application/json")
                .putHeader("Idempotency-Key", "order-1");
        if (tenant != null) {
            request.putHeader("Taskline-Tenant", tenant);
        }
        return await(request.sendBuffer(Buffer.buffer(sleep().encode())));
    }

    @Test
    void a_bad_tenant_name_is_refused_and_changes_nothing() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG)) {
            HttpResponse<Buffer> spaced = submit(node, "/api/tasks", "acme corp", sleep());
            assertEquals(422, spaced.statusCode(), spaced.bodyAsString());
            assertTrue(spaced.bodyAsString().contains("Taskline-Tenant"), spaced.bodyAsString());
            assertEquals(
                    422, submit(node, "/api/tasks", "x".repeat(129), sleep()).statusCode());
            HttpResponse<Buffer> twice = await(node.http
                    .post("/api/tasks")
                    .putHeader("Content-Type", "application/json")
                    .putHeader("Taskline-Tenant", List.of("acme", "globex"))
                    .sendBuffer(Buffer.buffer(sleep().encode())));
            assertEquals(400, twice.statusCode(), twice.bodyAsString());
            assertEquals(
                    0, node.getJson("/api/tasks?limit=10").getJsonArray("tasks").size());
        }
    }

    @Test
    void tasks_read_back_from_the_journal_count_for_their_tenant() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock();
        Vertx vertx = Vertx.vertx();
        Pool pool = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(2))
                .connectingTo(PgUrl.parse(db))
                .using(vertx)
                .build();
        try {
            await(Migrator.migrate(vertx, pool));
            List<Insert> journaled = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                journaled.add(Insert.waiting(Task.builder(TaskIds.next(clock), "default", "gate")
                        .runAt(clock.instant())
                        .tenant("acme")
                        .build()));
            }
            await(new Journal(pool, clock).insert(journaled));
        } finally {
            await(pool.close());
            await(vertx.close());
        }

        // Loaded at start: one runs, two wait, all three are acme's, which is its limit.
        try (TestNode node = TestNode.start(db, CONFIG, clock)) {
            GateHandler.Call running = GateHandler.next(TestNode.WAIT);
            node.until("/api/queues", q -> queue(q).getInteger("waiting") == 2);
            HttpResponse<Buffer> refused = submit(node, "/api/tasks", "acme", gate());
            assertEquals(429, refused.statusCode(), refused.bodyAsString());
            assertEquals(3, refused.bodyAsJsonObject().getInteger("unfinished"));
            assertEquals(202, submit(node, "/api/tasks", "globex", gate()).statusCode());
            running.succeed(new JsonObject());
            drain(node, 4, 3);
        }
    }

    @Test
    void a_tenants_blocked_flow_tasks_count_against_its_limit_until_they_end() throws Exception {
        GateHandler.reset();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG)) {
            JsonObject chain = new JsonObject()
                    .put("chain", new JsonArray().add(gate()).add(gate()).add(gate()));
            HttpResponse<Buffer> flow = submit(node, "/api/flows", "acme", chain);
            assertEquals(202, flow.statusCode(), flow.bodyAsString());
            GateHandler.Call first = GateHandler.next(TestNode.WAIT);

            // One running, two blocked: acme is at its limit of three in the queue, though two of
            // them are in no queue yet.
            HttpResponse<Buffer> refused = submit(node, "/api/tasks", "acme", gate());
            assertEquals(429, refused.statusCode(), refused.bodyAsString());
            assertEquals(3, refused.bodyAsJsonObject().getInteger("unfinished"));
            HttpResponse<Buffer> another = submit(node, "/api/flows", "acme", chain);
            assertEquals(
                    429, another.statusCode(), "a flow's blocked tasks ask for room too: " + another.bodyAsString());
            HttpResponse<Buffer> tooLong = submit(
                    node,
                    "/api/flows",
                    "globex",
                    new JsonObject()
                            .put(
                                    "chain",
                                    new JsonArray()
                                            .add(gate())
                                            .add(gate())
                                            .add(gate())
                                            .add(gate())));
            assertEquals(422, tooLong.statusCode(), "four for a limit of three never fit: " + tooLong.bodyAsString());

            // The first step ends and the second runs, the journal counted anew: one running and one
            // blocked leave room for one more of acme's, and no more.
            first.succeed(new JsonObject());
            GateHandler.Call second = GateHandler.next(TestNode.WAIT);
            await(node.node.passes().blocked().runOnce());
            assertEquals(202, submit(node, "/api/tasks", "acme", gate()).statusCode());
            assertEquals(429, submit(node, "/api/tasks", "acme", gate()).statusCode());
            second.succeed(new JsonObject());
            GateHandler.next(TestNode.WAIT).succeed(new JsonObject());
            GateHandler.next(TestNode.WAIT).succeed(new JsonObject());
            node.waitForFlowState(flow.bodyAsJsonObject().getString("flowId"), "succeeded");
            await(node.node.passes().blocked().runOnce());
            assertEquals(202, submit(node, "/api/flows", "acme", chain).statusCode(), "all ended: room for three");
            drain(node, 4 + 3, 3);
        }
    }

    private static HttpResponse<Buffer> submit(TestNode node, String path, String tenant, JsonObject body)
            throws Exception {
        HttpRequest<Buffer> request = node.http.post(path).putHeader("Content-Type", "application/json");
        if (tenant != null) {
            request.putHeader("Taskline-Tenant", tenant);
        }
        return await(request.sendBuffer(Buffer.buffer(body.encode())));
    }

    /** Lets the {@code left} gate tasks still to start end, one slot at a time, until {@code total} have finished. */
    private static void drain(TestNode node, int total, int left) throws Exception {
        for (int i = 0; i < left; i++) {
            GateHandler.next(TestNode.WAIT).succeed(new JsonObject());
        }
        node.until("/api/queues", q -> queue(q).getInteger("finished") == total);
    }

    private static JsonObject gate() {
        return new JsonObject().put("type", "gate");
    }

    private static JsonObject sleep() {
        return new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0));
    }

    private static JsonObject batch(int n) {
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < n; i++) {
            tasks.add(gate());
        }
        return new JsonObject().put("tasks", tasks);
    }

    private static JsonObject queue(JsonObject queues) {
        return TestNode.queueIn(queues, "default");
    }
}
