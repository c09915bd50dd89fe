package dev.taskline.workflow;

import static dev.taskline.workflow.DurableStepsTest.probe;
import static dev.taskline.workflow.DurableStepsTest.stepNames;
import static dev.taskline.workflow.DurableStepsTest.submit;
import static dev.taskline.workflow.DurableStepsTest.waiting;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.journal.JournalSteps;
import dev.taskline.journal.PgUrl;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.StepsProbeHandler;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.time.Duration;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Events ({@code POST /api/events}): delivered to the tasks waiting for their name whose field
 * matches, taken by a wait that began after they came while its attempt ran, started as tasks by
 * triggers, and answered once per id.
 */
class DurableEventsTest {

    private static TestNode node;
    private static String url;

    @BeforeAll
    static void start() throws Exception {
        url = TestPostgres.newDatabase();
        node = TestNode.start(url, """
                {"queues": {"default": {"slots": 4}},
                 "triggers": [{"event": "user.created", "type": "onboarding", "concurrencyKey": "data.userId"},
                              {"event": "user.created", "type": "steps-probe"}]}
                """, new MutableClock());
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    private static JsonObject event(String name, JsonObject data, String id) throws Exception {
        JsonObject body = new JsonObject().put("name", name).put("data", data);
        if (id != null) {
            body.put("id", id);
        }
        HttpResponse<Buffer> answer = node.post("/api/events", body);
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject();
    }

    private static JsonObject waitFor(String orderId) {
        return new JsonObject()
                .put("event", "order.paid")
                .put("field", "data.orderId")
                .put("value", orderId)
                .put("timeoutMs", 3_600_000);
    }

    @Test
    void an_event_wakes_only_the_tasks_waiting_for_its_name_and_value() throws Exception {
        String a = submit(node, probe(new JsonArray().add(waitFor("a-1"))));
        String b = submit(node, probe(new JsonArray().add(waitFor("b-1"))));
        waiting(node, a);
        waiting(node, b);
        assertEquals(
                0,
                event("order.paid", new JsonObject().put("orderId", "c-1"), null)
                        .getInteger("delivered"));
        assertEquals(
                0,
                event("order.shipped", new JsonObject().put("orderId", "a-1"), null)
                        .getInteger("delivered"));
        JsonObject answer =
                event("order.paid", new JsonObject().put("orderId", "a-1").put("amount", 10), "paid-a-1");
        assertEquals(1, answer.getInteger("delivered"));
        assertEquals(
                answer,
                event("order.paid", new JsonObject().put("orderId", "a-1").put("amount", 10), "paid-a-1"),
                "a repeat of its id: the first answer, delivered to no one again");
        JsonObject done = node.waitForState(a, "succeeded");
        JsonObject got = done.getJsonObject("result").getJsonObject("results").getJsonObject("order.paid");
        assertEquals(10, got.getJsonObject("data").getInteger("amount"));
        assertEquals("paid-a-1", got.getString("id"));
        assertEquals(
                1,
                done.getJsonArray("history").stream()
                        .filter(e -> "resumed".equals(((JsonObject) e).getString("reason")))
                        .count());
        assertEquals("pending", node.getJson("/api/tasks/" + b).getString("state"), "b waits on");
        node.wake(Duration.ofHours(1));
        JsonObject timedOut = node.waitForState(b, "succeeded");
        assertNull(timedOut.getJsonObject("result").getJsonObject("results").getValue("order.paid"));
    }

    private static String submitAs(String tenant, JsonObject task) throws Exception {
        HttpResponse<Buffer> answer = TestNode.await(node.http
                .post("/api/tasks")
                .putHeader("Taskline-Tenant", tenant)
                .sendJsonObject(task));
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }

    private static List<String> fields(Pool pool) throws Exception {
        List<String> fields = new java.util.ArrayList<>();
        for (Row row : TestNode.await(pool.query(
                        "SELECT tenant || '/' || name || '/' || field AS f FROM event_fields WHERE tenant = 'acme' ORDER BY 1")
                .execute())) {
            fields.add(row.getString("f"));
        }
        return fields;
    }

    @Test
    void the_fields_waited_on_are_each_tenant_s_own_and_forgotten_once_no_task_waits_on_them() throws Exception {
        Pool pool = PgBuilder.pool()
                .connectingTo(PgUrl.parse(url))
                .using(node.vertx)
                .build();
        try {
            String paid = submitAs(
                    "acme",
                    probe(new JsonArray()
                            .add(new JsonObject()
                                    .put("event", "refund.made")
                                    .put("field", "data.orderId")
                                    .put("value", "r-1"))));
            String other = submitAs(
                    "acme",
                    probe(new JsonArray()
                            .add(new JsonObject()
                                    .put("event", "refund.made")
                                    .put("field", "data.customer")
                                    .put("value", "c-1"))));
            waiting(node, paid);
            waiting(node, other);
            assertEquals(List.of("acme/refund.made/data.customer", "acme/refund.made/data.orderId"), fields(pool));
            HttpResponse<Buffer> acmes = TestNode.await(node.http
                    .post("/api/events")
                    .putHeader("Taskline-Tenant", "acme")
                    .sendJsonObject(new JsonObject()
                            .put("name", "refund.made")
                            .put("data", new JsonObject().put("orderId", "r-1"))));
            assertEquals(1, acmes.bodyAsJsonObject().getInteger("delivered"), acmes.bodyAsString());
            node.waitForState(paid, "succeeded");

            JournalSteps steps = new JournalSteps(pool, node.clock);
            TestNode.await(steps.deleteUnwaitedFields(node.clock.instant().minusSeconds(60), 100));
            assertEquals(2, fields(pool).size(), "a field filed after the cutoff is kept, waited on or not");
            TestNode.await(steps.deleteUnwaitedFields(node.clock.instant().plusSeconds(60), 100));
            assertEquals(List.of("acme/refund.made/data.customer"), fields(pool), "still waited on");
        } finally {
            TestNode.await(pool.close());
        }
    }

    @Test
    void a_numeric_match_value_matches_the_events_number() throws Exception {
        String a = submit(
                node,
                probe(new JsonArray()
                        .add(new JsonObject()
                                .put("event", "invoice.paid")
                                .put("field", "data.invoice.number")
                                .put("value", 42))));
        waiting(node, a);
        assertEquals(
                1,
                event("invoice.paid", new JsonObject().put("invoice", new JsonObject().put("number", 42)), null)
                        .getInteger("delivered"));
        node.waitForState(a, "succeeded");
    }

    @Test
    void an_event_that_came_while_the_attempt_ran_towards_its_wait_is_taken_by_it() throws Exception {
        String id = submit(
                node,
                probe(new JsonArray()
                        .add(new JsonObject().put("latch", "before"))
                        .add(waitFor("early-1"))));
        assertEquals(id, StepsProbeHandler.latched(TestNode.WAIT));
        assertEquals(
                0,
                event("order.paid", new JsonObject().put("orderId", "early-1"), null)
                        .getInteger("delivered"));
        StepsProbeHandler.open(id, "before");
        JsonObject done = node.waitForState(id, "succeeded");
        assertEquals(
                "early-1",
                done.getJsonObject("result")
                        .getJsonObject("results")
                        .getJsonObject("order.paid")
                        .getJsonObject("data")
                        .getString("orderId"));
    }

    @Test
    void an_event_starts_a_task_per_trigger_and_its_id_is_answered_once() throws Exception {
        JsonObject first =
                event("user.created", new JsonObject().put("userId", "u-1").put("dayMs", 60_000), "evt-1");
        JsonArray started = first.getJsonArray("started");
        assertEquals(2, started.size(), first::encode);
        JsonObject again = event("user.created", new JsonObject().put("userId", "u-1"), "evt-1");
        assertEquals(started, again.getJsonArray("started"), "the first answer, nothing started twice");
        assertEquals(first.getInteger("delivered"), again.getInteger("delivered"));
        JsonObject onboarding = node.getJson("/api/tasks/" + started.getString(0));
        assertEquals("onboarding", onboarding.getString("type"));
        assertEquals("u-1", onboarding.getString("concurrencyKey"));
        assertEquals("u-1", onboarding.getJsonObject("payload").getString("userId"));

        // The onboarding function: welcome, a day for the first login, tips, three days, survey.
        String task = onboarding.getString("id");
        JsonObject waiting = waiting(node, task);
        assertEquals("user.login", waiting.getJsonObject("wait").getString("name"));
        assertEquals(
                1,
                event("user.login", new JsonObject().put("userId", "u-1"), null).getInteger("delivered"));
        JsonObject asleep = node.waitForTask(
                task,
                t -> t.getJsonObject("wait") != null
                        && "sleep".equals(t.getJsonObject("wait").getString("kind")),
                "a sleep");
        assertEquals(List.of("welcome-mail", "first-login", "tips-mail"), stepNames(asleep));
        node.wake(Duration.ofMinutes(3));
        JsonObject done = node.waitForState(task, "succeeded");
        assertEquals(
                List.of("welcome-mail", "first-login", "tips-mail", "wait-3-days", "survey-mail"), stepNames(done));
        assertTrue(done.getJsonObject("result").getBoolean("loggedIn"));
    }

    @Test
    void bad_events_are_refused_and_start_nothing() throws Exception {
        assertEquals(
                422,
                node.post("/api/events", new JsonObject().put("data", new JsonObject()))
                        .statusCode());
        assertEquals(
                422,
                node.post(
                                "/api/events",
                                new JsonObject().put("name", "user.created").put("data", new JsonArray()))
                        .statusCode());
        assertEquals(
                422,
                node.post(
                                "/api/events",
                                new JsonObject().put("name", "user.created").put("extra", 1))
                        .statusCode());
        assertEquals(
                422,
                node.post("/api/events", new JsonObject().put("name", "x".repeat(201)))
                        .statusCode());
        assertEquals(
                422,
                node.post(
                                "/api/events",
                                new JsonObject().put("name", "user.created").put("id", 7))
                        .statusCode());
        HttpResponse<Buffer> heavy = node.post(
                "/api/events",
                new JsonObject()
                        .put("name", "user.created")
                        .put("data", new JsonObject().put("userId", "nobody").put("pad", "p".repeat(300_000))));
        // Each waiting task gets a copy of the data: held to a signal's bound (durable.maxSignalBytes, 256 KB).
        assertEquals(422, heavy.statusCode(), heavy.bodyAsString());
        assertTrue(heavy.bodyAsString().contains("durable.maxSignalBytes"), heavy.bodyAsString());
        assertEquals(
                0,
                node.getJson("/api/tasks?type=onboarding").getJsonArray("tasks").stream()
                        .filter(t -> ((JsonObject) t)
                                .getJsonObject("payload")
                                .getString("userId", "")
                                .equals("nobody"))
                        .count());
    }
}
