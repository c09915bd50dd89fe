package dev.taskline.handler;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.HandlerJars;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;
import org.junit.jupiter.api.io.TempDir;

/** A handler built apart from the server, dropped into its handlers directory, runs tasks over HTTP. */
class HandlerJarTest {

    @TempDir
    Path handlers;

    @Test
    void the_example_handler_runs_from_the_handlers_directory_and_refuses_bad_payloads_at_submission()
            throws Exception {
        HandlerJars.build(
                Path.of("examples/java-handler/src/main/java"),
                Path.of("examples/java-handler/src/main/resources"),
                handlers.resolve("word-count-handler.jar"));
        String config = new JsonObject()
                .put("handlers", new JsonObject().put("dir", handlers.toString()))
                .encode();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), config)) {
            HttpResponse<Buffer> accepted = node.post(
                    "/api/tasks",
                    new JsonObject()
                            .put("type", "word-count")
                            .put("payload", new JsonObject().put("text", "the quick fox and the lazy dog")));
            assertEquals(202, accepted.statusCode(), accepted.bodyAsString());
            JsonObject task = node.waitForState(accepted.bodyAsJsonObject().getString("id"), "succeeded");
            assertEquals(new JsonObject().put("words", 7).put("distinct", 6), task.getJsonObject("result"));

            HttpResponse<Buffer> refused = node.post(
                    "/api/tasks",
                    new JsonObject().put("type", "word-count").put("payload", new JsonObject().put("text", 42)));
            assertEquals(422, refused.statusCode());
            assertTrue(
                    refused.bodyAsJsonObject().getString("detail").contains("text must be a string"),
                    refused.bodyAsString());
        }
    }

    @Test
    void a_node_whose_handlers_directory_holds_a_clashing_jar_does_not_start() throws Exception {
        HandlerJars.oneHandler("Impostor", "sleep", handlers.resolve("impostor.jar"));
        String config = new JsonObject()
                .put("handlers", new JsonObject().put("dir", handlers.toString()))
                .encode();
        Exception e = org.junit.jupiter.api.Assertions.assertThrows(
                Exception.class,
                () -> TestNode.start(TestPostgres.newDatabase(), config).close());
        Throwable cause = e;
        while (cause != null && !(cause instanceof HandlerLoadException)) {
            cause = cause.getCause();
        }
        assertTrue(cause != null && cause.getMessage().contains("impostor.jar"), String.valueOf(e));
    }
}
