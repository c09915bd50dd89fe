package dev.taskline.http;

import dev.taskline.config.AuthConfig;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.service.KeyService;
import dev.taskline.service.Views;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.List;
import java.util.Set;

/** {@code /api/keys}: an admin issues, lists and revokes API keys without a restart. */
final class KeyRoutes implements Routes {

    private final KeyService service;
    private final BodyHandler body;
    private final List<AuthConfig.Key> configured;

    KeyRoutes(KeyService service, BodyHandler body, List<AuthConfig.Key> configured) {
        this.service = service;
        this.body = body;
        this.configured = configured;
    }

    @Override
    public void mount(Router router) {
        router.post("/api/keys").handler(body).handler(this::issue);
        router.get("/api/keys").handler(this::list);
        router.delete("/api/keys/:id").handler(this::revoke);
    }

    private void issue(RoutingContext ctx) {
        JsonObject json = Requests.jsonBody(ctx);
        InvalidTaskException.unlessKnown(json, Set.of("id", "tenant", "scopes", "queues"), "");
        Object id = json.getValue("id");
        Object tenant = json.getValue("tenant");
        if ((id != null && !(id instanceof String)) || (tenant != null && !(tenant instanceof String))) {
            throw new InvalidTaskException("id and tenant must be strings");
        }
        service.issue(Requests.caller(ctx), (String) id, (String) tenant, texts(json, "scopes"), texts(json, "queues"))
                .onSuccess(key -> {
                    ctx.response().putHeader("Location", "/api/keys/" + key.id());
                    Requests.json(
                            ctx,
                            201,
                            new JsonObject()
                                    .put("id", key.id())
                                    .put("secret", key.secret())
                                    .put("tenant", key.tenant())
                                    .put("scopes", new JsonArray(key.scopes()))
                                    .put("queues", new JsonArray(key.queues())));
                })
                .onFailure(ctx::fail);
    }

    private void list(RoutingContext ctx) {
        service.list(Requests.caller(ctx), configured)
                .onSuccess(keys -> {
                    JsonArray list = new JsonArray();
                    for (Views.KeyInfo key : keys) {
                        list.add(new JsonObject()
                                .put("id", key.id())
                                .put("tenant", key.tenant())
                                .put("scopes", new JsonArray(key.scopes()))
                                .put("queues", new JsonArray(key.queues()))
                                .put("source", key.source())
                                .put(
                                        "createdAt",
                                        key.createdAt() == null
                                                ? null
                                                : key.createdAt().toString())
                                .put("createdBy", key.createdBy())
                                .put(
                                        "revokedAt",
                                        key.revokedAt() == null
                                                ? null
                                                : key.revokedAt().toString())
                                .put("revokedBy", key.revokedBy()));
                    }
                    Requests.json(ctx, 200, new JsonObject().put("keys", list));
                })
                .onFailure(ctx::fail);
    }

    private void revoke(RoutingContext ctx) {
        service.revoke(Requests.caller(ctx), Requests.path(ctx, "id"))
                .onSuccess(v -> ctx.response().setStatusCode(204).end())
                .onFailure(ctx::fail);
    }

    /** A list of the body, empty when it is left out. */
    private static Set<String> texts(JsonObject json, String field) {
        Set<String> texts = Requests.strings(json, field, field + " must be an array of strings");
        return texts == null ? Set.of() : texts;
    }
}
