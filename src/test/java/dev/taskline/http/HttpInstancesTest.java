package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import org.junit.jupiter.api.Test;

/** With http.instances 3 every instance shares the first one's port, a random one here. */
class HttpInstancesTest {

    @Test
    void several_instances_serve_the_same_port() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), "{\"http\": {\"instances\": 3}}")) {
            assertEquals(3, node.node.httpInstances());
            assertEquals(200, node.get("/health/live").statusCode());
            // Fresh connections, one per request: each is handed to one of the instances in turn.
            WebClient fresh = WebClient.create(
                    node.vertx,
                    new WebClientOptions()
                            .setKeepAlive(false)
                            .setDefaultHost("127.0.0.1")
                            .setDefaultPort(node.node.httpPort()));
            for (int i = 0; i < 9; i++) {
                JsonObject body = new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0));
                assertEquals(
                        202,
                        TestNode.await(fresh.post("/api/tasks").sendJsonObject(body))
                                .statusCode());
            }
            node.until(
                    "/api/tasks?state=succeeded",
                    page -> page.getJsonArray("tasks").size() == 9);
            fresh.close();
        }
    }
}
