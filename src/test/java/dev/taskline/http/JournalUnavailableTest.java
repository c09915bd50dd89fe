package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import org.junit.jupiter.api.Test;

/** When the journal goes away, submissions get 503 with Retry-After and readiness turns false. */
class JournalUnavailableTest {

    @Test
    void submissions_get_503_and_ready_goes_down_when_the_journal_is_gone() throws Exception {
        String db = TestPostgres.newDatabase();
        try (TestNode node = TestNode.start(db, "{\"queues\": {\"default\": {\"capacity\": 10}}}")) {
            assertEquals(
                    202,
                    node.post("/api/tasks", new JsonObject().put("type", "sleep"))
                            .statusCode());
            TestPostgres.dropDatabase(db);

            HttpResponse<Buffer> refused = node.post("/api/tasks", new JsonObject().put("type", "sleep"));
            assertEquals(503, refused.statusCode(), refused.bodyAsString());
            assertEquals("application/problem+json", refused.getHeader("Content-Type"));
            assertNotNull(refused.getHeader("Retry-After"));
            assertFalse(refused.bodyAsString().contains("Exception"));
            assertEquals(503, node.get("/health/ready").statusCode());
            assertEquals(200, node.get("/health/live").statusCode());

            // The refused task gave its reserved place back.
            JsonObject queue =
                    node.getJson("/api/queues").getJsonArray("queues").getJsonObject(0);
            assertEquals(1, queue.getInteger("accepted"));
        }
    }
}
