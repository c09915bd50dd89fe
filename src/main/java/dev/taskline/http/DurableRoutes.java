package dev.taskline.http;

import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.service.DurableService;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.Set;
import java.util.UUID;

/** Signals to durable tasks ({@code /api/tasks/{id}/signals/{name}}) and events ({@code /api/events}). */
final class DurableRoutes implements Routes {

    private final DurableService service;
    private final BodyHandler body;

    DurableRoutes(DurableService service, BodyHandler body) {
        this.service = service;
        this.body = body;
    }

    @Override
    public void mount(Router router) {
        router.post("/api/tasks/:id/signals/:name").handler(body).handler(this::signal);
        router.post("/api/events").handler(body).handler(this::event);
    }

    /** 202: the signal is kept for the task (and woke it if it was waiting for it). */
    private void signal(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        JsonObject payload = null;
        if (!ctx.body().isEmpty()) {
            JsonObject json = Requests.jsonBody(ctx);
            InvalidTaskException.unlessKnown(json, Set.of("payload"), "");
            Object value = json.getValue("payload");
            if (value != null && !(value instanceof JsonObject)) {
                throw new InvalidTaskException("payload must be a JSON object");
            }
            payload = (JsonObject) value;
        }
        service.signal(Requests.caller(ctx), id, ctx.pathParam("name"), payload, Submissions.idempotencyKey(ctx))
                .onSuccess(sent -> Requests.json(
                        ctx,
                        202,
                        new JsonObject()
                                .put("id", String.valueOf(sent.signalId()))
                                .put("task", id.toString())
                                .put("name", sent.name())
                                .put("woke", sent.woke())))
                .onFailure(ctx::fail);
    }

    /** 202: delivered to the tasks waiting for it, and the tasks its triggers name started. */
    private void event(RoutingContext ctx) {
        JsonObject json = Requests.jsonBody(ctx);
        InvalidTaskException.unlessKnown(json, Set.of("name", "data", "id"), "");
        Object name = json.getValue("name");
        if (!(name instanceof String)) {
            throw new InvalidTaskException("name must be the event's name, a string");
        }
        Object data = json.getValue("data");
        if (data != null && !(data instanceof JsonObject)) {
            throw new InvalidTaskException("data must be a JSON object");
        }
        Object eventId = json.getValue("id");
        if (eventId != null && !(eventId instanceof String)) {
            throw new InvalidTaskException("id must be a string");
        }
        service.event(Requests.caller(ctx), (String) name, (JsonObject) data, (String) eventId, Submissions.tenant(ctx))
                .onSuccess(answer -> Requests.json(ctx, 202, answer))
                .onFailure(ctx::fail);
    }
}
