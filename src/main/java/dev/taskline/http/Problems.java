package dev.taskline.http;

import dev.taskline.model.problem.JournalUnavailableException;
import dev.taskline.model.problem.ProblemException;
import io.vertx.core.http.HttpClosedException;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * The one place where failures become HTTP answers: {@code application/problem+json} (RFC 9457)
 * with type, title, status and detail, never a stack trace.
 */
final class Problems {

    private static final Logger LOG = Logger.getLogger(Problems.class.getName());
    private static final String TYPE_PREFIX = "urn:taskline:problem:";
    static final String CONTENT_TYPE = "application/problem+json";

    private Problems() {}

    /** Failures answered with 429 because the node refuses work it has not taken. */
    static boolean isRefusal(Throwable failure) {
        return failure instanceof ProblemException e && e.refusesWork();
    }

    static void handle(RoutingContext ctx) {
        Throwable failure = ctx.failure();
        if (failure == null) {
            byStatus(ctx, ctx.statusCode());
            return;
        }
        if (failure instanceof io.vertx.ext.web.handler.HttpException e
                && e.getStatusCode() >= 400
                && e.getStatusCode() < 500) {
            byStatus(ctx, e.getStatusCode());
            return;
        }
        if (failure instanceof HttpClosedException) {
            // The connection went while its request was still arriving (the client gave up, or the
            // node closed it as it shut down): nobody is left to answer, and nothing failed here.
            LOG.log(
                    Level.FINE,
                    "connection closed before its request was read: "
                            + ctx.request().method() + " " + ctx.request().path());
            return;
        }
        Problem problem = of(ctx, failure);
        send(ctx, problem.status, problem.type, problem.title, problem.detail, problem.extensions, problem.retryAfter);
    }

    /**
     * The problem one item of a batch failed with, as the JSON of its answer (with its own {@code
     * status}); the batch as a whole is answered 200.
     */
    static JsonObject describe(RoutingContext ctx, Throwable failure) {
        Problem problem = of(ctx, failure);
        JsonObject body = new JsonObject()
                .put("status", problem.status)
                .put("type", TYPE_PREFIX + problem.type)
                .put("title", problem.title)
                .put("detail", problem.detail);
        return problem.extensions == null ? body : body.mergeIn(problem.extensions);
    }

    private record Problem(
            int status, String type, String title, String detail, JsonObject extensions, Long retryAfter) {}

    private static Problem of(RoutingContext ctx, Throwable failure) {
        if (failure instanceof ProblemException e) {
            if (e instanceof JournalUnavailableException) {
                unavailable(failure);
            }
            return new Problem(e.status(), e.type(), e.title(), e.detail(), e.extensions(), e.retryAfterSeconds());
        }
        if (failure instanceof DecodeException) {
            return new Problem(400, "malformed-json", "Malformed JSON", "the body is not valid JSON", null, null);
        }
        LOG.log(
                Level.SEVERE,
                "unexpected failure on " + ctx.request().method() + " "
                        + ctx.request().path(),
                failure);
        return new Problem(
                500, "internal-error", "Internal error", "the server failed to answer; see its log", null, null);
    }

    private static final long UNAVAILABLE_LOG_EVERY_NANOS = java.util.concurrent.TimeUnit.SECONDS.toNanos(10);
    private static final java.util.concurrent.atomic.AtomicLong UNAVAILABLE_LOGGED =
            new java.util.concurrent.atomic.AtomicLong(System.nanoTime() - UNAVAILABLE_LOG_EVERY_NANOS);
    private static final java.util.concurrent.atomic.AtomicInteger UNAVAILABLE_SINCE =
            new java.util.concurrent.atomic.AtomicInteger();

    /**
     * An answer, not a fault of ours; but an operator wants to know the journal is away. Once every
     * ten seconds, with how many were answered so meanwhile: a failover answers hundreds a second.
     */
    private static void unavailable(Throwable failure) {
        int since = UNAVAILABLE_SINCE.incrementAndGet();
        long last = UNAVAILABLE_LOGGED.get();
        long now = System.nanoTime();
        if (now - last >= UNAVAILABLE_LOG_EVERY_NANOS && UNAVAILABLE_LOGGED.compareAndSet(last, now)) {
            UNAVAILABLE_SINCE.addAndGet(-since);
            LOG.log(
                    Level.WARNING,
                    "journal unavailable (" + since + " requests answered 503 since the last" + " such line)",
                    failure);
        }
    }

    /** Failures that Vert.x Web signals by status alone (no route, body too large, ...). */
    static void byStatus(RoutingContext ctx, int status) {
        switch (status) {
            case 404 ->
                send(
                        ctx,
                        404,
                        "not-found",
                        "Not found",
                        "no resource at " + ctx.request().path(),
                        null,
                        null);
            case 405 ->
                send(
                        ctx,
                        405,
                        "method-not-allowed",
                        "Method not allowed",
                        ctx.request().method() + " is not allowed on "
                                + ctx.request().path(),
                        null,
                        null);
            case 413 ->
                send(ctx, 413, "body-too-large", "Body too large", "the request body exceeds the limit", null, null);
            case 400 ->
                send(ctx, 400, "malformed-request", "Malformed request", "the request could not be read", null, null);
            default -> send(ctx, status < 400 ? 500 : status, "error", "Error", "the request failed", null, null);
        }
    }

    private static void send(
            RoutingContext ctx,
            int status,
            String type,
            String title,
            String detail,
            JsonObject extensions,
            Long retryAfterSeconds) {
        HttpServerResponse response = ctx.response();
        if (response.headWritten()) {
            response.reset();
            return;
        }
        JsonObject body = new JsonObject()
                .put("type", TYPE_PREFIX + type)
                .put("title", title)
                .put("status", status)
                .put("detail", detail)
                .put("instance", ctx.request().path());
        if (extensions != null) {
            body.mergeIn(extensions);
        }
        response.setStatusCode(status).putHeader("Content-Type", CONTENT_TYPE);
        if (status == 401) {
            response.putHeader("WWW-Authenticate", "Bearer realm=\"taskline\"");
        }
        if (retryAfterSeconds != null) {
            response.putHeader("Retry-After", Long.toString(retryAfterSeconds));
        }
        response.end(body.encode());
    }
}
