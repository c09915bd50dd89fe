package dev.taskline.http;

import dev.taskline.service.ScheduleService;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

/** {@code /api/schedules}: make, list, read, pause, resume and delete schedules. */
final class ScheduleRoutes implements Routes {

    private final ScheduleService service;
    private final BodyHandler body;

    ScheduleRoutes(ScheduleService service, BodyHandler body) {
        this.service = service;
        this.body = body;
    }

    @Override
    public void mount(Router router) {
        router.post("/api/schedules").handler(body).handler(this::create);
        router.get("/api/schedules").handler(this::list);
        router.get("/api/schedules/:name").handler(this::get);
        router.delete("/api/schedules/:name").handler(this::delete);
        router.post("/api/schedules/:name/pause").handler(ctx -> pause(ctx, true));
        router.post("/api/schedules/:name/resume").handler(ctx -> pause(ctx, false));
    }

    private void create(RoutingContext ctx) {
        JsonObject json = Requests.jsonBody(ctx);
        service.create(Requests.caller(ctx), json)
                .onSuccess(view -> {
                    ctx.response()
                            .putHeader(
                                    "Location", "/api/schedules/" + view.spec().name());
                    Requests.json(ctx, 201, ApiJson.schedule(view));
                })
                .onFailure(ctx::fail);
    }

    private void list(RoutingContext ctx) {
        service.list(Requests.caller(ctx))
                .onSuccess(views -> {
                    JsonArray list = new JsonArray();
                    views.forEach(view -> list.add(ApiJson.schedule(view)));
                    Requests.json(ctx, 200, new JsonObject().put("schedules", list));
                })
                .onFailure(ctx::fail);
    }

    private void get(RoutingContext ctx) {
        service.get(Requests.caller(ctx), Requests.path(ctx, "name"))
                .onSuccess(view -> Requests.json(ctx, 200, ApiJson.schedule(view)))
                .onFailure(ctx::fail);
    }

    private void pause(RoutingContext ctx, boolean paused) {
        service.pause(Requests.caller(ctx), Requests.path(ctx, "name"), paused)
                .onSuccess(view -> Requests.json(ctx, 200, ApiJson.schedule(view)))
                .onFailure(ctx::fail);
    }

    private void delete(RoutingContext ctx) {
        service.delete(Requests.caller(ctx), Requests.path(ctx, "name"))
                .onSuccess(v -> ctx.response().setStatusCode(204).end())
                .onFailure(ctx::fail);
    }
}
