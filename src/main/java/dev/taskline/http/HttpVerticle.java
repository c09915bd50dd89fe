package dev.taskline.http;

import dev.taskline.config.TasklineConfig;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.service.Services;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.StaticHandler;
import java.util.List;
import java.util.concurrent.TimeUnit;

/**
 * The HTTP/JSON API, its streams and the dashboard. It builds the router from the route classes,
 * one a resource; each reads its requests, calls the {@link Services} and writes the answer.
 * Every failure becomes an answer in {@link Problems}.
 */
public final class HttpVerticle extends VerticleBase {

    private final TasklineConfig config;
    private final Services services;
    private final TasklineMetrics metrics;
    private HttpServer server;
    private Router router;
    private WorkerExecutor scrapes;

    private final Authentication authentication;

    /**
     * @param metrics        for the timing of submissions, which only this layer sees from arrival to answer
     * @param authentication who is calling; one for all the node's instances
     */
    public HttpVerticle(
            TasklineConfig config, Services services, TasklineMetrics metrics, Authentication authentication) {
        this.config = config;
        this.services = services;
        this.metrics = metrics;
        this.authentication = authentication;
    }

    @Override
    public Future<?> start() {
        // A thread of its own: blocking task handlers share the default worker pool and must not make
        // a scrape wait, nor scrapes them.
        scrapes = vertx.createSharedWorkerExecutor("taskline-metrics", 1);
        BodyHandler body = BodyHandler.create(false).setBodyLimit(config.http().bodyLimitBytes());
        Submissions submissions = new Submissions(metrics);
        EventLinks links = new EventLinks(authentication);
        Router router = Router.router(vertx);
        router.route().handler(this::securityHeaders);
        // Before any route: who is calling is known (or refused) before a body is read.
        router.route("/api/*").handler(authentication);
        router.route("/metrics").handler(authentication);
        List<Routes> routes = List.of(
                new TaskRoutes(services.tasks(), services.durable(), body, submissions, links, config.http()),
                new DurableRoutes(services.durable(), body),
                new BatchRoutes(services.tasks(), body, submissions, links),
                new FlowRoutes(services.flows(), body, submissions, links, config.http()),
                new StreamRoutes(services.tasks(), services.flows(), vertx),
                new QueueRoutes(services.node()),
                new ScheduleRoutes(services.schedules(), body),
                new WorkerRoutes(services.work(), body),
                new HealthRoutes(services.node(), scrapes),
                new ContractRoutes(),
                new SessionRoutes(authentication, services.keys()),
                new KeyRoutes(services.keys(), body, config.auth().keys()));
        routes.forEach(r -> r.mount(router));
        this.router = router;
        // The dashboard: static files packaged in the jar, nothing fetched from elsewhere.
        router.get("/*")
                .handler(
                        StaticHandler.create("webroot").setCachingEnabled(false).setIndexPage("index.html"));

        router.route().failureHandler(Problems::handle);
        for (int status : new int[] {400, 404, 405, 413}) {
            router.errorHandler(status, ctx -> Problems.byStatus(ctx, status));
        }

        HttpServerOptions options = new HttpServerOptions()
                .setHost(config.http().host())
                .setPort(config.http().port())
                .setCompressionSupported(false)
                .setIdleTimeout(120)
                .setIdleTimeoutUnit(TimeUnit.SECONDS);
        if (config.http().tls() != null) {
            options.setSsl(true)
                    .setKeyCertOptions(new io.vertx.core.net.PemKeyCertOptions()
                            .setCertPath(config.http().tls().certPath().toString())
                            .setKeyPath(config.http().tls().keyPath().toString()));
        }
        return vertx.createHttpServer(options).requestHandler(router).listen().onSuccess(s -> server = s);
    }

    @Override
    public Future<?> stop() {
        return scrapes == null ? Future.succeededFuture() : scrapes.close();
    }

    /**
     * Every API route as {@code "METHOD /path/{param}"}, as OpenAPI writes them, for the contract's
     * test; the dashboard's static files are left out.
     */
    public List<String> routes() {
        List<String> list = new java.util.ArrayList<>();
        for (io.vertx.ext.web.Route route : router.getRoutes()) {
            String path = route.getPath();
            if (path == null || route.methods() == null || path.endsWith("*")) {
                continue;
            }
            String openApi = path.replaceAll(":([A-Za-z]+)", "{$1}");
            route.methods().forEach(m -> list.add(m.name() + " " + openApi));
        }
        return list;
    }

    /**
     * On every answer, the dashboard's as the API's: scripts, styles, images and connections from
     * this origin only, never inline, never in a frame; no guessing at a content type; over TLS (to
     * the node, or to a trusted proxy that says so), HTTPS only from now on.
     */
    private void securityHeaders(RoutingContext ctx) {
        ctx.response()
                .putHeader("Content-Security-Policy", CONTENT_SECURITY_POLICY)
                .putHeader("X-Content-Type-Options", "nosniff")
                .putHeader("X-Frame-Options", "DENY")
                .putHeader("Referrer-Policy", "no-referrer");
        if (authentication.client(ctx).secure()) {
            ctx.response().putHeader("Strict-Transport-Security", "max-age=31536000");
        }
        ctx.next();
    }

    static final String CONTENT_SECURITY_POLICY = "default-src 'none'; script-src 'self'; style-src 'self'; "
            + "img-src 'self' data:; connect-src 'self'; font-src 'self'; manifest-src 'self'; base-uri 'none'; "
            + "form-action 'self'; frame-ancestors 'none'";

    /** The port actually bound (differs from the configured one when that is 0). */
    public int port() {
        return server == null ? -1 : server.actualPort();
    }
}
