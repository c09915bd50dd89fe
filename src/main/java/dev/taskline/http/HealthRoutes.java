package dev.taskline.http;

import dev.taskline.service.Caller;
import dev.taskline.service.NodeService;
import dev.taskline.support.Version;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/** {@code /health/*} for orchestrators and {@code /metrics} for Prometheus. */
final class HealthRoutes implements Routes {

    /** This build's version (the pom's), told on {@code /health/live} so that clients can check it. */
    static final String VERSION = Version.current();

    private final NodeService service;
    private final WorkerExecutor scrapes;

    /** @param scrapes where a scrape runs: a thread of its own, off the event loop */
    HealthRoutes(NodeService service, WorkerExecutor scrapes) {
        this.service = service;
        this.scrapes = scrapes;
    }

    @Override
    public void mount(Router router) {
        router.get("/health/live").handler(this::live);
        router.get("/health/ready").handler(this::ready);
        router.get("/metrics").handler(this::metrics);
    }

    private void live(RoutingContext ctx) {
        Requests.json(ctx, 200, new JsonObject().put("status", "UP").put("version", VERSION));
    }

    private void ready(RoutingContext ctx) {
        service.readiness()
                .onSuccess(ready -> {
                    switch (ready) {
                        case UP ->
                            Requests.json(
                                    ctx,
                                    200,
                                    new JsonObject().put("status", "UP").put("journal", "UP"));
                        case JOURNAL_DOWN ->
                            Requests.json(
                                    ctx,
                                    503,
                                    new JsonObject().put("status", "DOWN").put("journal", "DOWN"));
                        case SHUTTING_DOWN ->
                            Requests.json(
                                    ctx,
                                    503,
                                    new JsonObject().put("status", "DOWN").put("reason", "shutting down"));
                    }
                })
                .onFailure(ctx::fail);
    }

    private void metrics(RoutingContext ctx) {
        // Writing every series and histogram bucket takes 10 to 25 ms of CPU: on the event loop that
        // would hold up each submission behind it, once per scrape.
        Caller caller = Requests.caller(ctx);
        scrapes.executeBlocking(() -> service.scrapeMetrics(caller), false)
                .onSuccess(text -> ctx.response()
                        .putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
                        .end(text))
                .onFailure(ctx::fail);
    }
}
