package dev.taskline.http;

import dev.taskline.config.TasklineConfig;
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

    private final TasklineConfig.Http bounds;

    FlowRoutes(
            FlowService service,
            BodyHandler body,
            Submissions submissions,
            EventLinks links,
            TasklineConfig.Http bounds) {
        this.bounds = bounds;
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
        router.get("/api/tasks/:id/parents").handler(this::parents);
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

    /**
     * The flow with a page of its tasks: all of a flow of up to {@link Pages#MOST} unless {@code
     * limit} asks for fewer; {@code after} and {@code next} page on.
     */
    private void get(RoutingContext ctx) {
        UUID after = Pages.after(ctx, "a task id of the flow");
        int limit = Requests.query(ctx, "limit") == null ? Pages.MOST : Pages.limit(ctx);
        service.flow(
                        Requests.caller(ctx),
                        Requests.idParam(ctx),
                        after,
                        limit,
                        bounds.maxInlineBytes(),
                        bounds.maxPageBytes())
                .onSuccess(view -> Requests.json(
                        ctx,
                        200,
                        FlowViews.flow(
                                view, links.flow(view.flow().id(), view.flow().tenant()), limit)))
                .onFailure(ctx::fail);
    }

    /**
     * {@code GET /api/tasks/{id}/parents}: a page of what a flow task's parents ended with, by key
     * ({@code {items: [{key, state, result | error}], next}}); {@code after} is the key the previous
     * page ended with. A page ends at {@code limit} parents or at http.maxPageBytes of values (a
     * heavier single one comes alone). Read by the task's readers and by workers of its queue.
     */
    private void parents(RoutingContext ctx) {
        String after = Requests.query(ctx, "after");
        if (after != null && (after.isEmpty() || after.length() > 1000 || after.indexOf('\0') >= 0)) {
            throw ApiException.badRequest("after must be the key the previous page ended with");
        }
        service.parents(Requests.caller(ctx), Requests.idParam(ctx), after, Pages.limit(ctx), bounds.maxPageBytes())
                .onSuccess(page -> Requests.json(ctx, 200, page.json()))
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
