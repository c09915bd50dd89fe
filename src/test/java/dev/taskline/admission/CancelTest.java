package dev.taskline.admission;

import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/** Cancelling pending and running tasks, and whole batches. One slot, held by gate tasks. */
class CancelTest {

    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        // No claims ahead: a task waiting for the slot stays pending, so a cancel ends it at once (see ClaimAheadTest).
        node = TestNode.start(
                TestPostgres.newDatabase(), "{\"queues\": {\"default\": {\"slots\": 1, \"claimAhead\": 0}}}");
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    @BeforeEach
    void reset() {
        GateHandler.reset();
    }

    @Test
    void a_pending_task_is_cancelled_at_once_and_a_running_one_when_its_handler_stops() throws Exception {
        String running = submit();
        GateHandler.Call call = GateHandler.next(TestNode.WAIT);
        CountDownLatch told = new CountDownLatch(1);
        call.task().onCancel(told::countDown);
        String pending = submit();

        HttpResponse<Buffer> cancelPending = node.post("/api/tasks/" + pending + "/cancel", new JsonObject());
        assertEquals(202, cancelPending.statusCode());
        assertEquals("cancelled", cancelPending.bodyAsJsonObject().getString("state"));
        assertEquals("cancelled", node.getJson("/api/tasks/" + pending).getString("state"));
        assertEquals(
                0,
                node.getJson("/api/queues")
                        .getJsonArray("queues")
                        .getJsonObject(0)
                        .getInteger("waiting"),
                "its waiting place is free");

        HttpResponse<Buffer> cancelRunning = node.post("/api/tasks/" + running + "/cancel", new JsonObject());
        assertEquals(202, cancelRunning.statusCode());
        assertEquals("cancelling", cancelRunning.bodyAsJsonObject().getString("state"));
        assertTrue(told.await(TestNode.WAIT.toSeconds(), TimeUnit.SECONDS), "the handler was told to stop");
        assertTrue(call.cancelled());
        call.fail("stopped on request");
        JsonObject cancelled = node.waitForState(running, "cancelled");
        assertEquals(List.of("submitted", "claimed", "cancel_requested", "cancelled"), reasons(cancelled));

        HttpResponse<Buffer> again = node.post("/api/tasks/" + running + "/cancel", new JsonObject());
        assertEquals(409, again.statusCode(), "a finished task cannot be cancelled");
        assertEquals("application/problem+json", again.getHeader("Content-Type"));
        assertEquals(
                404,
                node.post("/api/tasks/" + UUID.randomUUID() + "/cancel", new JsonObject())
                        .statusCode());
    }

    @Test
    void a_running_task_that_is_asked_to_cancel_never_goes_back_to_pending() throws Exception {
        String id = node.post("/api/tasks", new JsonObject().put("type", "gate").put("maxAttempts", 5))
                .bodyAsJsonObject()
                .getString("id");
        GateHandler.Call call = GateHandler.next(TestNode.WAIT);
        node.post("/api/tasks/" + id + "/cancel", new JsonObject());
        // The handler ignores the signal and fails as if by accident: no retry, the task ends cancelled.
        call.fail("some error");
        assertEquals("cancelled", node.waitForState(id, "cancelled").getString("state"));
    }

    @Test
    void cancelling_a_batch_cancels_its_waiting_tasks_and_stops_its_running_one() throws Exception {
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < 3; i++) {
            tasks.add(new JsonObject().put("type", "gate"));
        }
        String batch = node.post("/api/batches", new JsonObject().put("tasks", tasks))
                .bodyAsJsonObject()
                .getString("batchId");
        GateHandler.Call call = GateHandler.next(TestNode.WAIT);
        JsonObject answer =
                node.post("/api/batches/" + batch + "/cancel", new JsonObject()).bodyAsJsonObject();
        assertEquals(2, answer.getInteger("cancelled"));
        assertEquals(1, answer.getInteger("cancelling"));
        call.succeed(new JsonObject());
        node.waitForBatch(batch, b -> b.getJsonObject("counts").getInteger("cancelled") == 3, "all cancelled");
    }

    @Test
    void the_built_in_sleep_stops_when_its_task_is_cancelled() throws Exception {
        String id = node.post(
                        "/api/tasks",
                        new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 3_600_000)))
                .bodyAsJsonObject()
                .getString("id");
        node.waitForState(id, "running");
        node.post("/api/tasks/" + id + "/cancel", new JsonObject());
        // It slept its hour out before (the task cancelling all along); the wait is TestNode's, a minute.
        JsonObject cancelled = node.waitForState(id, "cancelled");
        assertEquals(List.of("submitted", "claimed", "cancel_requested", "cancelled"), reasons(cancelled));
    }

    private static String submit() throws Exception {
        return node.post("/api/tasks", new JsonObject().put("type", "gate"))
                .bodyAsJsonObject()
                .getString("id");
    }
}
