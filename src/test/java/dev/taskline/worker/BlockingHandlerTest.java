package dev.taskline.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonObject;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Handlers that declare they block run on worker threads, never on an event loop. */
class BlockingHandlerTest {

    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), "{}");
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    @Test
    void a_blocking_handler_runs_on_a_worker_thread() throws Exception {
        String id = node.post("/api/tasks", new JsonObject().put("type", "blocking-probe"))
                .bodyAsJsonObject()
                .getString("id");
        JsonObject result = node.waitForState(id, "succeeded").getJsonObject("result");
        assertTrue(result.getBoolean("onWorkerThread"));
        assertFalse(result.getBoolean("onEventLoop"));
    }

    @Test
    void the_sleep_handler_runs_on_the_event_loop_and_reports_progress() throws Exception {
        String id = node.post(
                        "/api/tasks",
                        new JsonObject()
                                .put("type", "sleep")
                                .put("payload", new JsonObject().put("ms", 10).put("steps", 2)))
                .bodyAsJsonObject()
                .getString("id");
        JsonObject task = node.waitForState(id, "succeeded");
        assertEquals(100, task.getJsonObject("progress").getInteger("percent"));
    }
}
