package dev.taskline.http;

import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Set;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** The happy path over real HTTP: submit, answer at once, run, read back with history. */
class SubmitAndRunTest {

    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), """
        {"queues": {"default": {"slots": 4, "capacity": 1000}, "matching": {"slots": 2, "capacity": 100}}}
        """);
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    @Test
    void a_submitted_task_is_answered_202_with_its_location_and_then_succeeds() throws Exception {
        HttpResponse<Buffer> response = node.post(
                "/api/tasks",
                new JsonObject()
                        .put("type", "sleep")
                        .put("payload", new JsonObject().put("ms", 30).put("steps", 3)));
        assertEquals(202, response.statusCode());
        JsonObject accepted = response.bodyAsJsonObject();
        String id = accepted.getString("id");
        assertTrue(
                List.of("pending", "running").contains(accepted.getString("state")), "an idle queue takes it at once");
        assertEquals("default", accepted.getString("queue"));
        assertEquals("/api/tasks/" + id, response.getHeader("Location"));

        JsonObject task = node.waitForState(id, "succeeded");
        assertEquals(1, task.getInteger("attempt"));
        assertEquals(30, task.getJsonObject("result").getInteger("sleptMs"));
        assertEquals(100, task.getJsonObject("progress").getInteger("percent"));
        assertNotNull(task.getString("finishedAt"));
        assertEquals(List.of("submitted", "claimed", "succeeded"), reasons(task));
    }

    @Test
    void the_sleep_handler_says_when_its_code_began_running_after_the_task_was_accepted() throws Exception {
        Instant sent = Instant.now();
        HttpResponse<Buffer> response = node.post("/api/tasks", new JsonObject().put("type", "sleep"));
        JsonObject task = node.waitForState(response.bodyAsJsonObject().getString("id"), "succeeded");
        Instant done = Instant.now();
        String text = task.getJsonObject("result").getString("startedAt");
        assertTrue(
                text.matches("\\d{4}-\\d{2}-\\d{2}T\\d{2}:\\d{2}:\\d{2}\\.\\d{6}Z"),
                "ISO-8601 in microseconds: " + text);
        Instant started = Instant.parse(text);
        // Microsecond text of a nanosecond clock: compare at that precision.
        assertFalse(
                started.isBefore(sent.truncatedTo(ChronoUnit.MICROS)),
                started + " before the request was sent at " + sent);
        assertFalse(started.isAfter(done), started + " after the task was seen done at " + done);
    }

    @Test
    void a_failing_handler_ends_the_task_failed_with_its_error_recorded() throws Exception {
        String id = node.post(
                        "/api/tasks",
                        new JsonObject()
                                .put("type", "sleep")
                                .put("maxAttempts", 1)
                                .put("payload", new JsonObject().put("failTimes", 1)))
                .bodyAsJsonObject()
                .getString("id");
        JsonObject task = node.waitForState(id, "failed");
        assertEquals("planned failure 1 of 1", task.getJsonObject("error").getString("message"));
        assertNull(task.getValue("result"));
        assertEquals(List.of("submitted", "claimed", "failed"), reasons(task));
        assertEquals(
                "planned failure 1 of 1",
                task.getJsonArray("history")
                        .getJsonObject(2)
                        .getJsonObject("detail")
                        .getString("message"));
    }

    @Test
    void a_qualification_match_batch_scores_every_project() throws Exception {
        JsonObject company = new JsonObject()
                .put("name", "Acme")
                .put(
                        "qualifications",
                        new JsonArray()
                                .add(new JsonObject().put("name", "ISO 27001").put("level", 3))
                                .add(new JsonObject().put("name", "Java").put("level", 2)));
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < 5; i++) {
            JsonObject project = new JsonObject()
                    .put("name", "P" + i)
                    .put(
                            "requirements",
                            new JsonArray()
                                    .add(new JsonObject()
                                            .put("name", "ISO 27001")
                                            .put("minLevel", 2)
                                            .put("weight", 2)
                                            .put("mandatory", true))
                                    .add(new JsonObject()
                                            .put("name", i % 2 == 0 ? "Java" : "Kotlin")
                                            .put("minLevel", 2)
                                            .put("weight", 1)));
            tasks.add(new JsonObject()
                    .put("type", "qualification-match")
                    .put("queue", "matching")
                    .put(
                            "payload",
                            new JsonObject()
                                    .put("company", company)
                                    .put("project", project)
                                    .put("simulateMs", 20)));
        }
        HttpResponse<Buffer> response = node.post("/api/batches", new JsonObject().put("tasks", tasks));
        assertEquals(202, response.statusCode(), response.bodyAsString());
        JsonObject batch = response.bodyAsJsonObject();
        String batchId = batch.getString("batchId");
        assertEquals("/api/batches/" + batchId, response.getHeader("Location"));
        assertEquals(5, batch.getJsonArray("tasks").size());

        JsonObject done =
                node.waitForBatch(batchId, b -> b.getJsonObject("counts").getInteger("succeeded") == 5, "all done");
        assertEquals(5, done.getInteger("size"));
        for (Object item : done.getJsonArray("tasks")) {
            JsonObject task = (JsonObject) item;
            JsonObject result = task.getJsonObject("result");
            boolean hasJava = task.getJsonObject("payload")
                    .getJsonObject("project")
                    .getJsonArray("requirements")
                    .getJsonObject(1)
                    .getString("name")
                    .equals("Java");
            assertEquals(hasJava ? 100 : 67, result.getInteger("score"), task.encode());
            assertTrue(result.getBoolean("mandatoryMet"));
            assertEquals(batchId, task.getString("batchId"));
        }
    }

    @Test
    void the_task_list_pages_by_keyset_without_gaps_or_repeats() throws Exception {
        String type = "sleep";
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < 7; i++) {
            tasks.add(
                    new JsonObject().put("type", type).put("queue", "matching").put("payload", new JsonObject()));
        }
        Set<String> submitted = new HashSet<>();
        for (Object t : node.post("/api/batches", new JsonObject().put("tasks", tasks))
                .bodyAsJsonObject()
                .getJsonArray("tasks")) {
            submitted.add(((JsonObject) t).getString("id"));
        }
        List<String> seen = new ArrayList<>();
        String after = null;
        do {
            JsonObject page = node.getJson(
                    "/api/tasks?queue=matching&type=sleep&limit=3" + (after == null ? "" : "&after=" + after));
            for (Object t : page.getJsonArray("tasks")) {
                seen.add(((JsonObject) t).getString("id"));
            }
            after = page.getString("next");
        } while (after != null);
        assertEquals(submitted, new HashSet<>(seen));
        assertEquals(seen.size(), new HashSet<>(seen).size(), "no task twice");
        List<String> sorted = new ArrayList<>(seen);
        sorted.sort(java.util.Comparator.reverseOrder());
        assertEquals(sorted, seen, "newest first");
    }

    @Test
    void the_health_endpoints_answer_and_ready_means_the_journal_answers() throws Exception {
        JsonObject live = node.getJson("/health/live");
        assertEquals("UP", live.getString("status"));
        assertTrue(live.getString("version").matches("\\d+\\.\\d+\\.\\d+.*"), live.encode());
        JsonObject ready = node.getJson("/health/ready");
        assertEquals("UP", ready.getString("journal"));
    }

    @Test
    void queues_report_their_slots_and_capacity() throws Exception {
        JsonArray queues = node.getJson("/api/queues").getJsonArray("queues");
        JsonObject matching = queues.stream()
                .map(q -> (JsonObject) q)
                .filter(q -> q.getString("name").equals("matching"))
                .findFirst()
                .orElseThrow();
        assertEquals(2, matching.getInteger("slots"));
        assertEquals(100, matching.getInteger("capacity"));
    }
}
