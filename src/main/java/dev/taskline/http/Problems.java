package dev.taskline.http;

import dev.taskline.admission.DeadlineUnmeetableException;
import dev.taskline.admission.IdempotencyConflictException;
import dev.taskline.admission.InvalidTaskException;
import dev.taskline.admission.QueueFullException;
import dev.taskline.admission.ShuttingDownException;
import dev.taskline.admission.TenantLimitException;
import dev.taskline.journal.JournalBusyException;
import dev.taskline.journal.JournalUnavailableException;
import dev.taskline.schedule.InvalidScheduleException;
import dev.taskline.schedule.ScheduleExistsException;
import dev.taskline.service.ForbiddenException;
import dev.taskline.service.KeyConflictException;
import dev.taskline.service.NotFoundException;
import dev.taskline.service.TaskStateConflictException;
import dev.taskline.service.TooManyStreamsException;
import dev.taskline.support.IsoTime;
import dev.taskline.worker.InvalidLeaseTokenException;
import dev.taskline.worker.LeaseLostException;
import dev.taskline.worker.TooManyClaimsException;
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
    /** How long a client should wait when the journal does not answer. */
    private static final long JOURNAL_RETRY_AFTER_SECONDS = 2;
    /** A draining node answers until it stops; a client should come back once it (or another) is up. */
    private static final long SHUTDOWN_RETRY_AFTER_SECONDS = 5;

    private Problems() {}

    /** Failures answered with 429: the node refuses work it has not taken. */
    static boolean isRefusal(Throwable failure) {
        return failure instanceof QueueFullException
                || failure instanceof TenantLimitException
                || failure instanceof JournalBusyException
                || failure instanceof DeadlineUnmeetableException;
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
        if (failure instanceof ApiException e) {
            Long retryAfter = e.extensions() == null ? null : e.extensions().getLong("retryAfterSeconds");
            return new Problem(e.status(), e.type(), e.title(), e.getMessage(), e.extensions(), retryAfter);
        } else if (failure instanceof QueueFullException e) {
            return new Problem(
                    429,
                    e.scheduled() ? "scheduled-full" : "queue-full",
                    e.scheduled() ? "Scheduled tasks full" : "Queue full",
                    e.getMessage(),
                    new JsonObject()
                            .put("queue", e.queue())
                            .put("capacity", e.capacity())
                            .put("backlog", e.backlog())
                            .put("requested", e.requested())
                            .put("retryAfterSeconds", e.retryAfterSeconds()),
                    e.retryAfterSeconds());
        } else if (failure instanceof TenantLimitException e) {
            return new Problem(
                    429,
                    "tenant-limit",
                    "Tenant limit reached",
                    e.getMessage(),
                    new JsonObject()
                            .put("queue", e.queue())
                            .put("tenant", e.tenant())
                            .put("limit", e.limit())
                            .put("unfinished", e.unfinished())
                            .put("requested", e.requested())
                            .put("retryAfterSeconds", e.retryAfterSeconds()),
                    e.retryAfterSeconds());
        } else if (failure instanceof DeadlineUnmeetableException e) {
            JsonObject estimate = new JsonObject()
                    .put("queue", e.queue())
                    .put("startBy", IsoTime.format(e.startBy()))
                    .put("estimatedStartAt", e.estimatedStartAt() == null ? null : IsoTime.format(e.estimatedStartAt()))
                    .put("estimatedWaitMs", e.estimatedWaitMs())
                    .put("paused", e.paused())
                    .put("retryAfterSeconds", e.retryAfterSeconds());
            if (e.index() >= 0) {
                estimate.put("taskIndex", e.index());
            }
            return new Problem(
                    429, "deadline-unmeetable", "Deadline unmeetable", e.getMessage(), estimate, e.retryAfterSeconds());
        } else if (failure instanceof JournalBusyException e) {
            return new Problem(
                    429,
                    "journal-busy",
                    "Journal busy",
                    e.getMessage(),
                    new JsonObject()
                            .put("waiting", e.waiting())
                            .put("retryAfterSeconds", JournalBusyException.RETRY_AFTER_SECONDS),
                    JournalBusyException.RETRY_AFTER_SECONDS);
        } else if (failure instanceof KeyConflictException e) {
            return new Problem(409, "key-conflict", "Key conflict", e.getMessage(), null, null);
        } else if (failure instanceof ForbiddenException e) {
            return new Problem(403, "forbidden", "Forbidden", e.getMessage(), null, null);
        } else if (failure instanceof NotFoundException e) {
            return new Problem(404, "not-found", "Not found", e.getMessage(), null, null);
        } else if (failure instanceof TaskStateConflictException e) {
            boolean finished = e.kind() == TaskStateConflictException.Kind.ALREADY_FINISHED;
            return new Problem(
                    409,
                    finished ? "already-finished" : "not-retryable",
                    finished ? "Already finished" : "Not retryable",
                    e.getMessage(),
                    null,
                    null);
        } else if (failure instanceof TooManyStreamsException e) {
            return new Problem(
                    503,
                    "unavailable",
                    "Unavailable",
                    e.getMessage(),
                    new JsonObject().put("retryAfterSeconds", TooManyStreamsException.RETRY_AFTER_SECONDS),
                    TooManyStreamsException.RETRY_AFTER_SECONDS);
        } else if (failure instanceof IdempotencyConflictException e) {
            return new Problem(409, "idempotency-key-reused", "Idempotency-Key reused", e.getMessage(), null, null);
        } else if (failure instanceof ShuttingDownException e) {
            return new Problem(
                    503, "shutting-down", "Shutting down", e.getMessage(), null, SHUTDOWN_RETRY_AFTER_SECONDS);
        } else if (failure instanceof InvalidScheduleException e) {
            return new Problem(422, "invalid-schedule", "Invalid schedule", e.getMessage(), null, null);
        } else if (failure instanceof ScheduleExistsException e) {
            return new Problem(409, "schedule-exists", "Schedule exists", e.getMessage(), null, null);
        } else if (failure instanceof InvalidTaskException e) {
            return new Problem(422, "invalid-task", "Invalid task", e.getMessage(), null, null);
        } else if (failure instanceof LeaseLostException e) {
            return new Problem(
                    409,
                    "lease-lost",
                    "Lease lost",
                    e.getMessage(),
                    new JsonObject()
                            .put("taskId", e.taskId().toString())
                            .put("state", e.state() == null ? null : e.state().sql()),
                    null);
        } else if (failure instanceof TooManyClaimsException e) {
            return new Problem(
                    429,
                    "too-many-claims",
                    "Too many claims waiting",
                    e.getMessage(),
                    new JsonObject().put("retryAfterSeconds", TooManyClaimsException.RETRY_AFTER_SECONDS),
                    TooManyClaimsException.RETRY_AFTER_SECONDS);
        } else if (failure instanceof InvalidLeaseTokenException e) {
            return new Problem(400, "invalid-lease", "Invalid lease", e.getMessage(), null, null);
        } else if (failure instanceof DecodeException) {
            return new Problem(400, "malformed-json", "Malformed JSON", "the body is not valid JSON", null, null);
        } else if (failure instanceof JournalUnavailableException) {
            LOG.log(Level.WARNING, "journal unavailable", failure);
            return new Problem(
                    503,
                    "journal-unavailable",
                    "Journal unavailable",
                    "the journal did not answer; nothing was changed",
                    null,
                    JOURNAL_RETRY_AFTER_SECONDS);
        } else {
            LOG.log(
                    Level.SEVERE,
                    "unexpected failure on " + ctx.request().method() + " "
                            + ctx.request().path(),
                    failure);
            return new Problem(
                    500, "internal-error", "Internal error", "the server failed to answer; see its log", null, null);
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
