package dev.taskline.http;

import dev.taskline.service.TaskService;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/** {@code /api/queues} and {@code /api/stats}: this node's queues, one by one and added up. */
final class QueueRoutes implements Routes {

  private final TaskService service;

  QueueRoutes(TaskService service) {
    this.service = service;
  }

  @Override
  public void mount(Router router) {
    router.get("/api/queues").handler(this::queues);
    router.get("/api/stats").handler(this::stats);
  }

  private void queues(RoutingContext ctx) {
    JsonArray list = new JsonArray();
    service.queues(Requests.caller(ctx)).forEach(queue -> list.add(ApiJson.queue(queue)));
    Requests.json(ctx, 200, new JsonObject().put("queues", list));
  }

  private void stats(RoutingContext ctx) {
    Requests.json(ctx, 200, ApiJson.stats(service.stats(Requests.caller(ctx))));
  }
}
