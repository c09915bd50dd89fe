package dev.taskline.http;

import dev.taskline.events.StreamSink;
import dev.taskline.events.TaskStream;
import dev.taskline.model.problem.ApiException;
import dev.taskline.service.FlowService;
import dev.taskline.service.TaskService;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

/** {@code .../events}: a task's, a batch's or a flow's transitions as Server-Sent Events, resumable by {@code Last-Event-ID}. */
final class StreamRoutes implements Routes {

    private final TaskService service;
    private final FlowService flows;
    private final Vertx vertx;

    StreamRoutes(TaskService service, FlowService flows, Vertx vertx) {
        this.service = service;
        this.flows = flows;
        this.vertx = vertx;
    }

    @Override
    public void mount(Router router) {
        router.get("/api/tasks/:id/events").handler(this::task);
        router.get("/api/batches/:id/events").handler(this::batch);
        router.get("/api/flows/:id/events").handler(this::flow);
    }

    private void flow(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        long after = lastEventId(ctx);
        follow(ctx, sink -> flows.stream(Requests.caller(ctx), id, after, sink));
    }

    private void task(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        long after = lastEventId(ctx);
        follow(ctx, sink -> service.streamTask(Requests.caller(ctx), id, after, sink));
    }

    private void batch(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        long after = lastEventId(ctx);
        follow(ctx, sink -> service.streamBatch(Requests.caller(ctx), id, after, sink));
    }

    private void follow(RoutingContext ctx, Function<Supplier<StreamSink>, Future<TaskStream>> open) {
        HttpServerResponse response = ctx.response();
        SseSink[] sink = new SseSink[1];
        open.apply(() -> sink[0] = new SseSink(vertx, response.setStatusCode(200)))
                .onSuccess(stream -> {
                    if (response.closed()) {
                        sink[0].clientGone();
                        stream.close();
                        return;
                    }
                    response.closeHandler(v -> {
                        sink[0].clientGone();
                        stream.close();
                    });
                })
                .onFailure(ctx::fail);
    }

    private static long lastEventId(RoutingContext ctx) {
        String header = Requests.header(ctx, "Last-Event-ID");
        if (header == null || header.isBlank()) {
            return 0;
        }
        try {
            long id = Long.parseLong(header.trim());
            if (id >= 0) {
                return id;
            }
        } catch (NumberFormatException e) {
            // fall through
        }
        throw ApiException.badRequest("Last-Event-ID must be an event id from this stream");
    }
}
