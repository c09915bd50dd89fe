package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.swagger.v3.oas.models.OpenAPI;
import io.swagger.v3.parser.OpenAPIV3Parser;
import io.swagger.v3.parser.core.models.SwaggerParseResult;
import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.client.HttpResponse;
import java.util.List;
import java.util.Set;
import java.util.TreeSet;
import org.junit.jupiter.api.Test;

/** {@code GET /openapi.json} parses as OpenAPI 3.1 and names exactly the routes the node serves. */
class OpenApiTest {

    @Test
    void the_contract_parses_and_matches_the_router_both_ways() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), "{}")) {
            HttpResponse<Buffer> answer = node.get("/openapi.json");
            assertEquals(200, answer.statusCode());
            SwaggerParseResult parsed = new OpenAPIV3Parser().readContents(answer.bodyAsString());
            assertEquals(List.of(), parsed.getMessages() == null ? List.of() : parsed.getMessages(), "parser messages");
            OpenAPI api = parsed.getOpenAPI();
            assertNotNull(api);
            assertEquals("3.1.0", api.getOpenapi());

            Set<String> documented = new TreeSet<>();
            api.getPaths()
                    .forEach((path, item) -> item.readOperationsMap()
                            .keySet()
                            .forEach(method -> documented.add(method.name() + " " + path)));
            Set<String> served = new TreeSet<>(node.node.httpRoutes());
            Set<String> undocumented = new TreeSet<>(served);
            undocumented.removeAll(documented);
            Set<String> unserved = new TreeSet<>(documented);
            unserved.removeAll(served);
            assertEquals(Set.of(), undocumented, "served but not documented");
            assertEquals(Set.of(), unserved, "documented but not served");
            assertTrue(served.size() > 20, served::toString);

            api.getPaths()
                    .forEach((path, item) -> item.readOperationsMap().forEach((method, operation) -> {
                        assertTrue(
                                operation.getResponses().keySet().stream().anyMatch(code -> code.startsWith("2")),
                                method + " " + path + " documents its success");
                    }));
        }
    }
}
