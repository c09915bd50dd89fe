package dev.taskline.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * What a local handler's code makes is held to the rule a request's body is (no NUL, within the
 * body's bound, readable back by the JSON decoder, instants within range), and an attempt whose
 * end the journal refuses ends failed with the reason: it never stays running to be claimed again.
 */
class UnrecordableEndsTest {

    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), """
                {"http": {"bodyLimitBytes": 65536},
                 "queues": {"default": {"slots": 4, "maxAttempts": 2, "backoffBaseMs": 0, "backoffCapMs": 0}}}
                """);
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    private static String submit(JsonObject payload) throws Exception {
        HttpResponse<Buffer> answer =
                node.post("/api/tasks", new JsonObject().put("type", "hostile").put("payload", payload));
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }

    /** The task ends failed at its first attempt, its error naming {@code why}; lists still read. */
    private static JsonObject failsForGood(JsonObject payload, String why) throws Exception {
        String id = submit(payload);
        JsonObject task = node.waitForState(id, "failed");
        String message = task.getJsonObject("error").getString("message");
        assertTrue(message.contains(why), payload.encode() + ": " + message);
        assertEquals(1, task.getInteger("attempt"), "a rule broken is not retried: " + task.encode());
        assertNull(task.getValue("result"));
        HttpResponse<Buffer> list = node.get("/api/tasks");
        assertEquals(200, list.statusCode(), list.bodyAsString());
        return task;
    }

    @Test
    void a_result_with_a_nul_ends_the_task_failed_naming_it_instead_of_running_for_good() throws Exception {
        failsForGood(new JsonObject().put("do", "nul-result"), "NUL");
    }

    @Test
    void a_result_the_json_decoder_could_not_read_back_is_not_stored_and_lists_keep_reading() throws Exception {
        failsForGood(new JsonObject().put("do", "long-key"), "field name");
        failsForGood(new JsonObject().put("do", "big-result").put("bytes", 70_000), "65536");
        failsForGood(new JsonObject().put("do", "not-json"), "JSON");
        // At the bound is fine.
        String id = submit(new JsonObject().put("do", "big-result").put("bytes", 60_000));
        assertEquals(
                60_000,
                node.waitForState(id, "succeeded")
                        .getJsonObject("result")
                        .getString("blob")
                        .length());
    }

    @Test
    void a_step_named_with_a_nul_fails_with_a_clear_message_not_the_journals() throws Exception {
        JsonObject task = failsOrRetried(new JsonObject().put("do", "nul-step"));
        String message = task.getJsonObject("error").getString("message");
        assertTrue(message.contains("step's name") && message.contains("NUL"), message);
        assertEquals(0, task.getJsonArray("steps").size());
        JsonObject result = failsOrRetried(new JsonObject().put("do", "nul-step-result"));
        assertTrue(result.getJsonObject("error").getString("message").contains("NUL"), result.encode());
        assertEquals(0, result.getJsonArray("steps").size());
        JsonObject big = failsOrRetried(new JsonObject().put("do", "big-step").put("bytes", 70_000));
        assertTrue(big.getJsonObject("error").getString("message").contains("65536"), big.encode());
        assertEquals(0, big.getJsonArray("steps").size());
    }

    @Test
    void a_sleep_or_a_wait_past_the_horizon_fails_the_attempt_instead_of_looping() throws Exception {
        JsonObject sleep = failsOrRetried(new JsonObject().put("do", "far-sleep"));
        assertTrue(sleep.getJsonObject("error").getString("message").contains("at most 9999-12-31"), sleep.encode());
        JsonObject waits = failsOrRetried(new JsonObject().put("do", "long-wait"));
        assertTrue(waits.getJsonObject("error").getString("message").contains("a year"), waits.encode());
        assertNull(waits.getValue("wait"));
    }

    @Test
    void an_end_the_journal_refuses_ends_the_task_failed_with_the_reason() throws Exception {
        // Whatever checks come before it, the journal has the last word: its refusal is recorded.
        JsonObject flow = new JsonObject()
                .put(
                        "tasks",
                        new io.vertx.core.json.JsonArray()
                                .add(new JsonObject()
                                        .put("key", "root")
                                        .put("type", "hostile")
                                        .put("payload", new JsonObject().put("do", "nul-spawn"))));
        HttpResponse<Buffer> accepted = node.post("/api/flows", flow);
        assertEquals(202, accepted.statusCode(), accepted.bodyAsString());
        String id = accepted.bodyAsJsonObject()
                .getJsonArray("tasks")
                .getJsonObject(0)
                .getString("id");
        JsonObject task = node.waitForState(id, "failed");
        assertEquals(1, task.getInteger("attempt"), task.encode());
        String message = task.getJsonObject("error").getString("message");
        assertTrue(message.contains("recorded") || message.contains("NUL"), message);
        assertEquals(200, node.get("/api/tasks").statusCode());
    }

    /** A handler's mistake in code is an ordinary failure: retried while attempts last, then failed. */
    private static JsonObject failsOrRetried(JsonObject payload) throws Exception {
        String id = submit(payload);
        JsonObject task = node.waitForState(id, "failed");
        assertEquals(2, task.getInteger("attempt"), task.encode());
        String message = task.getJsonObject("error").getString("message");
        assertFalse(message.contains("0x00") || message.contains("SQLSTATE"), message);
        return task;
    }
}
