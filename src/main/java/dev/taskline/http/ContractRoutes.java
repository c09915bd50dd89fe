package dev.taskline.http;

import io.vertx.core.buffer.Buffer;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.io.IOException;
import java.io.InputStream;
import java.io.UncheckedIOException;

/** {@code /openapi.json}: the API's contract, OpenAPI 3.1, packaged with the server and checked against its routes. */
final class ContractRoutes implements Routes {

    private static final Buffer DOCUMENT = load();

    @Override
    public void mount(Router router) {
        router.get("/openapi.json").handler(this::document);
    }

    private void document(RoutingContext ctx) {
        ctx.response().putHeader("Content-Type", "application/json").end(DOCUMENT);
    }

    private static Buffer load() {
        try (InputStream in = ContractRoutes.class.getResourceAsStream("/openapi.json")) {
            if (in == null) {
                throw new IllegalStateException("openapi.json is not packaged");
            }
            return Buffer.buffer(in.readAllBytes());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
