package dev.taskline.http;

import dev.taskline.admission.SubmissionJson;
import dev.taskline.service.TaskService;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;

/** {@code /api/batches}: submit a batch all or nothing, read it, cancel it. */
final class BatchRoutes implements Routes {

    private final TaskService service;
    private final BodyHandler body;
    private final Submissions submissions;
    private final EventLinks links;

    BatchRoutes(TaskService service, BodyHandler body, Submissions submissions, EventLinks links) {
        this.links = links;
        this.service = service;
        this.body = body;
        this.submissions = submissions;
    }

    @Override
    public void mount(Router router) {
        router.post("/api/batches").handler(body).handler(this::submit);
        router.post("/api/batches/:id/cancel").handler(this::cancel);
        router.get("/api/batches/:id").handler(this::get);
    }

    private void submit(RoutingContext ctx) {
        long arrived = System.nanoTime();
        JsonObject json = Requests.jsonBody(ctx);
        submissions.answer(
                ctx,
                arrived,
                service.submitBatch(
                        Requests.caller(ctx),
                        SubmissionJson.batch(json),
                        Submissions.idempotencyKey(ctx),
                        Submissions.tenant(ctx)),
                admitted -> "/api/batches/" + admitted.batchId(),
                admitted -> ApiJson.acceptedBatch(
                        admitted,
                        links.batch(
                                admitted.batchId(),
                                admitted.tasks().get(0).task().tenant())));
    }

    private void get(RoutingContext ctx) {
        service.batch(Requests.caller(ctx), Requests.idParam(ctx))
                .onSuccess(batch -> Requests.json(
                        ctx,
                        200,
                        ApiJson.batch(batch)
                                .put(
                                        "eventsUrl",
                                        links.batch(
                                                batch.id(),
                                                batch.tasks().isEmpty()
                                                        ? null
                                                        : batch.tasks().get(0).tenant()))))
                .onFailure(ctx::fail);
    }

    private void cancel(RoutingContext ctx) {
        service.cancelBatch(Requests.caller(ctx), Requests.idParam(ctx))
                .onSuccess(done -> Requests.json(
                        ctx,
                        202,
                        new JsonObject()
                                .put("batchId", done.batchId().toString())
                                .put("cancelled", done.cancelled())
                                .put("cancelling", done.cancelling())
                                .put("alreadyFinished", done.alreadyFinished())))
                .onFailure(ctx::fail);
    }
}
