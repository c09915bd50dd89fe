package dev.taskline.http;

import dev.taskline.service.NodeService;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code /api/queues} and {@code /api/stats}: this node's queues, one by one and added up (for a
 * tenant's key, its own tasks); an admin pauses and resumes them, and lists the nodes on the
 * journal ({@code /api/nodes}).
 */
final class QueueRoutes implements Routes {

    private final NodeService service;

    QueueRoutes(NodeService service) {
        this.service = service;
    }

    @Override
    public void mount(Router router) {
        router.get("/api/queues").handler(this::queues);
        router.get("/api/stats").handler(this::stats);
        router.post("/api/queues/:queue/pause").handler(ctx -> pause(ctx, true));
        router.post("/api/queues/:queue/resume").handler(ctx -> pause(ctx, false));
        router.get("/api/nodes").handler(this::nodes);
    }

    private void nodes(RoutingContext ctx) {
        service.nodes(Requests.caller(ctx))
                .onSuccess(nodes -> Requests.json(ctx, 200, ApiJson.nodes(nodes)))
                .onFailure(ctx::fail);
    }

    private void pause(RoutingContext ctx, boolean paused) {
        service.pause(Requests.caller(ctx), Requests.path(ctx, "queue"), paused)
                .onSuccess(control -> Requests.json(ctx, 200, ApiJson.pause(control)))
                .onFailure(ctx::fail);
    }

    private void queues(RoutingContext ctx) {
        service.queues(Requests.caller(ctx))
                .onSuccess(queues -> {
                    JsonArray list = new JsonArray();
                    queues.forEach(queue -> list.add(ApiJson.queue(queue)));
                    Requests.json(ctx, 200, new JsonObject().put("queues", list));
                })
                .onFailure(ctx::fail);
    }

    private void stats(RoutingContext ctx) {
        service.stats(Requests.caller(ctx))
                .onSuccess(stats -> Requests.json(ctx, 200, ApiJson.stats(stats)))
                .onFailure(ctx::fail);
    }
}
