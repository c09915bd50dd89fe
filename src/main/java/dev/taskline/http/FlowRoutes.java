package dev.taskline.http;

import dev.taskline.model.problem.ApiException;
import dev.taskline.service.FlowService;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.Set;
import java.util.UUID;

/** {@code /api/flows}: submit a graph of tasks all or nothing, read it, list them, cancel or retry one. */
final class FlowRoutes implements Routes {

    private static final Set<String> STATES = Set.of("running", "succeeded", "failed", "cancelled");

    private final FlowService service;
    private final BodyHandler body;
    private final Submissions submissions;
    private final EventLinks links;

    FlowRoutes(FlowService service, BodyHandler body, Submissions submissions, EventLinks links) {
        this.service = service;
        this.body = body;
        this.submissions = submissions;
        this.links = links;
    }

    @Override
    public void mount(Router router) {
        router.post("/api/flows").handler(body).handler(this::submit);
        router.get("/api/flows").handler(this::list);
        router.get("/api/flows/:id").handler(this::get);
        router.post("/api/flows/:id/cancel").handler(this::cancel);
        router.post("/api/flows/:id/retry").handler(this::retry);
    }

    private void submit(RoutingContext ctx) {
        long arrived = System.nanoTime();
        JsonObject json = Requests.jsonBody(ctx);
        submissions.answer(
                ctx,
                arrived,
                service.submit(Requests.caller(ctx), json, Submissions.idempotencyKey(ctx), Submissions.tenant(ctx)),
                accepted -> "/api/flows/" + accepted.flowId(),
                accepted -> FlowViews.accepted(accepted, links.flow(accepted.flowId(), accepted.tenant()))
                        .encode(),
                accepted -> accepted.replayed());
    }

    private void get(RoutingContext ctx) {
        service.flow(Requests.caller(ctx), Requests.idParam(ctx))
                .onSuccess(view -> Requests.json(
                        ctx,
                        200,
                        FlowViews.flow(
                                view, links.flow(view.flow().id(), view.flow().tenant()))))
                .onFailure(ctx::fail);
    }

    private void list(RoutingContext ctx) {
        String state = Requests.query(ctx, "state");
        if (state != null && !STATES.contains(state)) {
            throw ApiException.badRequest("state must be one of running, succeeded, failed, cancelled");
        }
        UUID afterId = Pages.after(ctx, "a flow id");
        int limit = Pages.limit(ctx);
        service.list(Requests.caller(ctx), state, Requests.query(ctx, "name"), afterId, limit)
                .onSuccess(page -> {
                    JsonArray flows = new JsonArray();
                    page.flows().forEach(flow -> flows.add(FlowViews.summary(flow)));
                    Requests.json(
                            ctx,
                            200,
                            new JsonObject()
                                    .put("flows", flows)
                                    .put(
                                            "next",
                                            page.next() == null
                                                    ? null
                                                    : page.next().toString()));
                })
                .onFailure(ctx::fail);
    }

    private void cancel(RoutingContext ctx) {
        service.cancel(Requests.caller(ctx), Requests.idParam(ctx))
                .onSuccess(done -> Requests.json(
                        ctx,
                        202,
                        new JsonObject()
                                .put("flowId", done.flowId().toString())
                                .put("cancelled", done.cancelled())
                                .put("cancelling", done.cancelling())))
                .onFailure(ctx::fail);
    }

    private void retry(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        service.retry(Requests.caller(ctx), id)
                .onSuccess(retried -> {
                    JsonArray ids = new JsonArray();
                    retried.forEach(task -> ids.add(task.toString()));
                    Requests.json(
                            ctx,
                            202,
                            new JsonObject().put("flowId", id.toString()).put("retried", ids));
                })
                .onFailure(ctx::fail);
    }
}
