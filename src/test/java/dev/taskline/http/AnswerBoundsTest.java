package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.util.HashSet;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * Every answer is bounded (issue 41, finding 4), over real HTTP: a claim's answer in bytes, a
 * child's heavy parents by reference and paged, the flow view paged, a task's steps and signals
 * bounded in count and bytes and read in pages.
 */
class AnswerBoundsTest {

    private static final int CLAIM_BYTES = 64 * 1024;
    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), """
        {"http": {"maxClaimBytes": %d, "maxInlineBytes": 2048, "maxPageBytes": 8192},
         "queues": {"default": {"slots": 4, "capacity": 1000},
                    "remote": {"remote": true, "slots": 1000, "capacity": 1000},
                    "held": {"remote": true, "capacity": 100},
                    "listed": {"remote": true, "capacity": 100}},
         "flows": {"maxTasks": 200, "maxParentBytes": 8192},
         "durable": {"maxStepsPerTask": 3, "maxStepBytes": 1024, "maxSignalsPerTask": 50, "maxSignalBytes": 1024}}
        """.formatted(CLAIM_BYTES));
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    private static JsonObject remote(String key, int padding, String... dependsOn) {
        JsonObject task = new JsonObject()
                .put("key", key)
                .put("type", "bounded")
                .put("queue", "remote")
                .put("payload", new JsonObject().put("pad", "p".repeat(padding)));
        return dependsOn.length == 0
                ? task
                : task.put("dependsOn", new JsonArray(java.util.List.of((Object[]) dependsOn)));
    }

    private static HttpResponse<Buffer> claim(String worker, int max) throws Exception {
        return node.post(
                "/api/queues/remote/claim",
                new JsonObject().put("worker", worker).put("max", max).put("waitMs", 0));
    }

    private static void complete(JsonObject task, JsonObject result) throws Exception {
        HttpResponse<Buffer> done = node.post(
                "/api/tasks/" + task.getString("id") + "/complete",
                new JsonObject()
                        .put("lease", task.getJsonObject("lease").getString("token"))
                        .put("result", result));
        assertEquals(200, done.statusCode(), done.bodyAsString());
    }

    @Test
    void a_claim_over_heavy_children_stays_within_its_bytes_and_every_task_is_handed_out_in_time() throws Exception {
        // Three parents whose results weigh 3 × 5 KB: more than a child is handed inline (8 KB).
        JsonArray tasks =
                new JsonArray().add(remote("p0", 10)).add(remote("p1", 10)).add(remote("p2", 10));
        int children = 30;
        for (int i = 0; i < children; i++) {
            // Each child's own payload is 10 KB: a claim of 64 KB takes about six of them.
            tasks.add(remote("c" + i, 10_000, "p0", "p1", "p2"));
        }
        // One child heavier than a whole claim: it still comes, alone.
        tasks.add(remote("huge", CLAIM_BYTES + 1_000, "p0"));
        HttpResponse<Buffer> accepted = node.post("/api/flows", new JsonObject().put("tasks", tasks));
        assertEquals(202, accepted.statusCode(), accepted.bodyAsString());
        String flowId = accepted.bodyAsJsonObject().getString("flowId");

        JsonArray parents = claim("w", 10).bodyAsJsonObject().getJsonArray("tasks");
        assertEquals(3, parents.size(), parents.encode());
        for (int i = 0; i < 3; i++) {
            complete(parents.getJsonObject(i), new JsonObject().put("blob", "r".repeat(5_000)));
        }

        Set<String> seen = new HashSet<>();
        int claims = 0;
        JsonObject child = null;
        while (seen.size() < children + 1) {
            assertTrue(++claims < 100, "every task is handed out: " + seen.size() + " of " + (children + 1));
            HttpResponse<Buffer> answer = claim("w", 1000);
            assertEquals(200, answer.statusCode(), answer.bodyAsString());
            JsonArray got = answer.bodyAsJsonObject().getJsonArray("tasks");
            if (got.size() > 1) {
                assertTrue(
                        answer.body().length() <= CLAIM_BYTES,
                        "a claim of " + got.size() + " tasks answered "
                                + answer.body().length() + " bytes");
            }
            for (int i = 0; i < got.size(); i++) {
                JsonObject task = got.getJsonObject(i);
                assertTrue(seen.add(task.getString("id")), "handed out twice: " + task.getString("id"));
                if (task.getJsonObject("payload").getString("pad").length() > CLAIM_BYTES) {
                    assertEquals(1, got.size(), "the huge one comes alone");
                    assertEquals(1, task.getInteger("attempt"));
                    continue;
                }
                // Parents heavier than passed inline: a reference, not the results.
                assertNull(task.getValue("parents"));
                JsonObject ref = task.getJsonObject("parentsRef");
                assertEquals(3, ref.getInteger("count"));
                assertTrue(ref.getLong("bytes") >= 15_000, ref.encode());
                assertEquals("/api/tasks/" + task.getString("id") + "/parents", ref.getString("url"));
                // Its first claim: a task left over by a bounded claim spent no attempt.
                assertEquals(1, task.getInteger("attempt"), task.encode());
                child = task;
            }
        }
        assertTrue(claims >= 5, "30 children of 10 KB took " + claims + " claims of 64 KB");

        // The worker reads the parents in pages: 8 KB of values a page, so one 5 KB result each.
        String url = child.getJsonObject("parentsRef").getString("url");
        JsonObject page = node.getJson(url + "?limit=2");
        assertEquals(1, page.getJsonArray("items").size(), page.encode());
        assertEquals("p0", page.getJsonArray("items").getJsonObject(0).getString("key"));
        assertEquals("succeeded", page.getJsonArray("items").getJsonObject(0).getString("state"));
        assertEquals(
                5_000,
                page.getJsonArray("items")
                        .getJsonObject(0)
                        .getJsonObject("result")
                        .getString("blob")
                        .length());
        Set<String> keys = new HashSet<>();
        String after = null;
        do {
            page = node.getJson(url + "?limit=2" + (after == null ? "" : "&after=" + after));
            page.getJsonArray("items").forEach(item -> keys.add(((JsonObject) item).getString("key")));
            after = page.getString("next");
        } while (after != null);
        assertEquals(Set.of("p0", "p1", "p2"), keys);

        // The flow view: pages with next, results past 2 KB left out with the task's own URL.
        JsonObject first = node.getJson("/api/flows/" + flowId + "?limit=2");
        assertEquals(2, first.getJsonArray("tasks").size());
        assertEquals(34, first.getInteger("size"));
        assertEquals(3, first.getJsonObject("counts").getInteger("succeeded"));
        JsonObject p0 = first.getJsonArray("tasks").getJsonObject(0);
        assertNull(p0.getValue("result"));
        assertEquals("/api/tasks/" + p0.getString("id"), p0.getString("resultUrl"));
        assertNotNull(first.getString("next"));
        JsonObject second = node.getJson(first.getString("nextUrl"));
        assertEquals("p2", second.getJsonArray("tasks").getJsonObject(0).getString("key"));
        JsonObject whole = node.getJson("/api/flows/" + flowId);
        assertEquals(34, whole.getJsonArray("tasks").size());
        assertNull(whole.getString("next"));
    }

    @Test
    void a_tasks_signals_and_steps_are_bounded_in_count_and_bytes_and_read_in_pages() throws Exception {
        HttpResponse<Buffer> submitted = node.post(
                "/api/tasks",
                new JsonObject().put("type", "bounded").put("queue", "held").put("payload", new JsonObject()));
        assertEquals(202, submitted.statusCode(), submitted.bodyAsString());
        String id = submitted.bodyAsJsonObject().getString("id");
        JsonObject payload = new JsonObject().put("note", "s".repeat(600));
        for (int i = 0; i < 50; i++) {
            HttpResponse<Buffer> sent =
                    node.post("/api/tasks/" + id + "/signals/poke", new JsonObject().put("payload", payload));
            assertEquals(202, sent.statusCode(), sent.bodyAsString());
        }
        HttpResponse<Buffer> fiftyFirst =
                node.post("/api/tasks/" + id + "/signals/poke", new JsonObject().put("payload", payload));
        assertEquals(422, fiftyFirst.statusCode(), fiftyFirst.bodyAsString());
        assertTrue(fiftyFirst.bodyAsString().contains("durable.maxSignalsPerTask"), fiftyFirst.bodyAsString());
        HttpResponse<Buffer> heavy = node.post(
                "/api/tasks/" + id + "/signals/other",
                new JsonObject().put("payload", new JsonObject().put("note", "h".repeat(2_000))));
        assertEquals(422, heavy.statusCode(), heavy.bodyAsString());
        assertTrue(heavy.bodyAsString().contains("durable.maxSignalBytes"), heavy.bodyAsString());

        // The task's read shows the first page of signals (8 KB of payloads), and a link to the rest.
        HttpResponse<Buffer> read = node.get("/api/tasks/" + id);
        assertTrue(
                read.body().length() < 16_000,
                "the read answered " + read.body().length() + " bytes");
        JsonObject task = read.bodyAsJsonObject();
        int shown = task.getJsonArray("signals").size();
        assertTrue(shown > 1 && shown < 50, "shown " + shown);
        String next = task.getString("signalsNext");
        assertNotNull(next);
        int all = shown;
        while (next != null) {
            JsonObject page = node.getJson(next.contains("?") ? next : next + "?");
            all += page.getJsonArray("items").size();
            next = page.getString("next") == null
                    ? null
                    : "/api/tasks/" + id + "/signals?after=" + page.getString("next");
        }
        assertEquals(50, all);

        // Steps of its worker: three kept, the fourth refused, a heavy one refused; read in pages.
        JsonObject claimed = node.post(
                        "/api/queues/held/claim",
                        new JsonObject().put("worker", "w").put("max", 1))
                .bodyAsJsonObject()
                .getJsonArray("tasks")
                .getJsonObject(0);
        String lease = claimed.getJsonObject("lease").getString("token");
        HttpResponse<Buffer> tooHeavy = node.post(
                "/api/tasks/" + id + "/steps/big",
                new JsonObject().put("lease", lease).put("result", "b".repeat(2_000)));
        assertEquals(422, tooHeavy.statusCode(), tooHeavy.bodyAsString());
        assertTrue(tooHeavy.bodyAsString().contains("durable.maxStepBytes"), tooHeavy.bodyAsString());
        for (int i = 0; i < 3; i++) {
            HttpResponse<Buffer> step = node.post(
                    "/api/tasks/" + id + "/steps/s" + i,
                    new JsonObject().put("lease", lease).put("result", i));
            assertEquals(200, step.statusCode(), step.bodyAsString());
        }
        HttpResponse<Buffer> again = node.post(
                "/api/tasks/" + id + "/steps/s0",
                new JsonObject().put("lease", lease).put("result", 9));
        assertEquals(200, again.statusCode(), "a step already kept answers its first result: " + again.bodyAsString());
        HttpResponse<Buffer> fourth = node.post(
                "/api/tasks/" + id + "/steps/s3",
                new JsonObject().put("lease", lease).put("result", 3));
        assertEquals(422, fourth.statusCode(), fourth.bodyAsString());
        assertTrue(fourth.bodyAsString().contains("durable.maxStepsPerTask"), fourth.bodyAsString());
        JsonObject first = node.getJson("/api/tasks/" + id + "/steps?limit=2");
        assertEquals(2, first.getJsonArray("items").size(), first.encode());
        assertEquals("s0", first.getJsonArray("items").getJsonObject(0).getString("name"));
        JsonObject rest = node.getJson("/api/tasks/" + id + "/steps?limit=2&after=" + first.getString("next"));
        assertEquals(1, rest.getJsonArray("items").size(), rest.encode());
        assertEquals("s2", rest.getJsonArray("items").getJsonObject(0).getString("name"));
        JsonObject history = node.getJson("/api/tasks/" + id + "/history?limit=2");
        assertEquals(2, history.getJsonArray("items").size());
        assertNotNull(history.getString("next"));
    }

    @Test
    void a_stream_s_events_carry_a_heavy_result_by_reference() throws Exception {
        HttpResponse<Buffer> accepted =
                node.post("/api/tasks", new JsonObject().put("type", "bounded").put("queue", "held"));
        assertEquals(202, accepted.statusCode(), accepted.bodyAsString());
        String id = accepted.bodyAsJsonObject().getString("id");
        JsonArray claimed = node.post(
                        "/api/queues/held/claim",
                        new JsonObject().put("worker", "w").put("max", 1).put("waitMs", 0))
                .bodyAsJsonObject()
                .getJsonArray("tasks");
        // 3 kB: past what an event carries inline (2 kB).
        complete(claimed.getJsonObject(0), new JsonObject().put("blob", "b".repeat(3_000)));
        // Resumed from the start, the stream reads the transitions from the journal, not a snapshot.
        try (dev.taskline.testing.SseClient stream = dev.taskline.testing.SseClient.open(
                node.vertx, node.node.httpPort(), "/api/tasks/" + id + "/events", 0L)) {
            java.util.List<dev.taskline.testing.SseClient.Event> events = stream.untilEnd();
            JsonObject succeeded = events.stream()
                    .filter(e -> "state".equals(e.event())
                            && "succeeded".equals(e.data().getString("to")))
                    .findFirst()
                    .orElseThrow()
                    .data();
            assertEquals(null, succeeded.getValue("result"));
            assertEquals("/api/tasks/" + id, succeeded.getString("resultUrl"));
            assertTrue(succeeded.getLong("resultBytes") > 3_000, succeeded.encode());
            JsonObject result = events.stream()
                    .filter(e -> "result".equals(e.event()))
                    .findFirst()
                    .orElseThrow()
                    .data();
            assertEquals("/api/tasks/" + id, result.getString("resultUrl"), result.encode());
        }
        assertEquals(
                3_000,
                node.getJson("/api/tasks/" + id)
                        .getJsonObject("result")
                        .getString("blob")
                        .length(),
                "the task's own read shows it");
    }

    @Test
    void a_list_and_a_batch_leave_heavy_payloads_out_and_stay_within_a_page_s_bytes() throws Exception {
        String type = "listed";
        JsonArray batch = new JsonArray();
        // Two too heavy to show inline (3 kB, past 2 kB); twelve of 1.5 kB, more than a page holds (8 kB).
        for (int i = 0; i < 14; i++) {
            batch.add(new JsonObject()
                    .put("type", type)
                    .put("queue", "listed")
                    .put("payload", new JsonObject().put("pad", "p".repeat(i < 2 ? 3_000 : 1_500))));
        }
        HttpResponse<Buffer> accepted = node.post("/api/batches", new JsonObject().put("tasks", batch));
        assertEquals(202, accepted.statusCode(), accepted.bodyAsString());
        String batchId = accepted.bodyAsJsonObject().getString("batchId");

        for (JsonArray tasks : java.util.List.of(
                node.getJson("/api/tasks?type=" + type + "&limit=200").getJsonArray("tasks"),
                node.getJson("/api/batches/" + batchId).getJsonArray("tasks"))) {
            assertEquals(14, tasks.size(), "every task is listed, shown or not");
            long shownBytes = 0;
            int leftOut = 0;
            for (int i = 0; i < tasks.size(); i++) {
                JsonObject task = tasks.getJsonObject(i);
                if (task.getValue("payload") == null) {
                    leftOut++;
                    assertTrue(task.getLong("payloadBytes") >= 1_500, task.encode());
                    assertEquals("/api/tasks/" + task.getString("id"), task.getString("resultUrl"));
                } else {
                    assertNull(task.getValue("payloadBytes"));
                    shownBytes += task.getJsonObject("payload").encode().length();
                }
            }
            assertTrue(shownBytes <= 8192, "shown together: " + shownBytes);
            assertTrue(leftOut >= 2 + 12 - 8192 / 1_500, "left out: " + leftOut);
        }
        JsonObject one =
                node.getJson("/api/batches/" + batchId).getJsonArray("tasks").getJsonObject(0);
        assertEquals(
                3_000,
                node.getJson("/api/tasks/" + one.getString("id"))
                        .getJsonObject("payload")
                        .getString("pad")
                        .length(),
                "the task's own read shows it whole");
    }
}
