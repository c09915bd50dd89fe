package dev.taskline.http;

import dev.taskline.admission.IdempotencyConflictException;
import dev.taskline.admission.InvalidTaskException;
import dev.taskline.admission.QueueFullException;
import dev.taskline.admission.ShuttingDownException;
import dev.taskline.admission.TenantLimitException;
import dev.taskline.journal.JournalBusyException;
import dev.taskline.journal.JournalUnavailableException;
import dev.taskline.service.NotFoundException;
import dev.taskline.service.TaskStateConflictException;
import dev.taskline.service.TooManyStreamsException;
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

  private Problems() {
  }

  /** Failures answered with 429: the node refuses work it has not taken. */
  static boolean isRefusal(Throwable failure) {
    return failure instanceof QueueFullException || failure instanceof TenantLimitException
        || failure instanceof JournalBusyException;
  }

  static void handle(RoutingContext ctx) {
    Throwable failure = ctx.failure();
    if (failure == null) {
      byStatus(ctx, ctx.statusCode());
      return;
    }
    if (failure instanceof ApiException e) {
      Long retryAfter = e.extensions() == null ? null : e.extensions().getLong("retryAfterSeconds");
      send(ctx, e.status(), e.type(), e.title(), e.getMessage(), e.extensions(), retryAfter);
    } else if (failure instanceof QueueFullException e) {
      send(ctx, 429, e.scheduled() ? "scheduled-full" : "queue-full", e.scheduled() ? "Scheduled tasks full" : "Queue full",
          e.getMessage(), new JsonObject()
          .put("queue", e.queue()).put("capacity", e.capacity()).put("backlog", e.backlog())
          .put("requested", e.requested()).put("retryAfterSeconds", e.retryAfterSeconds()), e.retryAfterSeconds());
    } else if (failure instanceof TenantLimitException e) {
      send(ctx, 429, "tenant-limit", "Tenant limit reached", e.getMessage(), new JsonObject()
          .put("queue", e.queue()).put("tenant", e.tenant()).put("limit", e.limit()).put("unfinished", e.unfinished())
          .put("requested", e.requested()).put("retryAfterSeconds", e.retryAfterSeconds()), e.retryAfterSeconds());
    } else if (failure instanceof JournalBusyException e) {
      send(ctx, 429, "journal-busy", "Journal busy", e.getMessage(),
          new JsonObject().put("waiting", e.waiting()).put("retryAfterSeconds", JournalBusyException.RETRY_AFTER_SECONDS),
          JournalBusyException.RETRY_AFTER_SECONDS);
    } else if (failure instanceof NotFoundException e) {
      send(ctx, 404, "not-found", "Not found", e.getMessage(), null, null);
    } else if (failure instanceof TaskStateConflictException e) {
      boolean finished = e.kind() == TaskStateConflictException.Kind.ALREADY_FINISHED;
      send(ctx, 409, finished ? "already-finished" : "not-retryable", finished ? "Already finished" : "Not retryable",
          e.getMessage(), null, null);
    } else if (failure instanceof TooManyStreamsException e) {
      send(ctx, 503, "unavailable", "Unavailable", e.getMessage(),
          new JsonObject().put("retryAfterSeconds", TooManyStreamsException.RETRY_AFTER_SECONDS),
          TooManyStreamsException.RETRY_AFTER_SECONDS);
    } else if (failure instanceof IdempotencyConflictException e) {
      send(ctx, 409, "idempotency-key-reused", "Idempotency-Key reused", e.getMessage(), null, null);
    } else if (failure instanceof ShuttingDownException e) {
      send(ctx, 503, "shutting-down", "Shutting down", e.getMessage(), null, SHUTDOWN_RETRY_AFTER_SECONDS);
    } else if (failure instanceof InvalidTaskException e) {
      send(ctx, 422, "invalid-task", "Invalid task", e.getMessage(), null, null);
    } else if (failure instanceof io.vertx.ext.web.handler.HttpException e && e.getStatusCode() >= 400
        && e.getStatusCode() < 500) {
      byStatus(ctx, e.getStatusCode());
    } else if (failure instanceof DecodeException) {
      send(ctx, 400, "malformed-json", "Malformed JSON", "the body is not valid JSON", null, null);
    } else if (failure instanceof JournalUnavailableException) {
      LOG.log(Level.WARNING, "journal unavailable", failure);
      send(ctx, 503, "journal-unavailable", "Journal unavailable",
          "the journal did not answer; nothing was changed", null, JOURNAL_RETRY_AFTER_SECONDS);
    } else {
      LOG.log(Level.SEVERE, "unexpected failure on " + ctx.request().method() + " " + ctx.request().path(), failure);
      send(ctx, 500, "internal-error", "Internal error", "the server failed to answer; see its log", null, null);
    }
  }

  /** Failures that Vert.x Web signals by status alone (no route, body too large, ...). */
  static void byStatus(RoutingContext ctx, int status) {
    switch (status) {
      case 404 -> send(ctx, 404, "not-found", "Not found", "no resource at " + ctx.request().path(), null, null);
      case 405 -> send(ctx, 405, "method-not-allowed", "Method not allowed",
          ctx.request().method() + " is not allowed on " + ctx.request().path(), null, null);
      case 413 -> send(ctx, 413, "body-too-large", "Body too large", "the request body exceeds the limit", null, null);
      case 400 -> send(ctx, 400, "malformed-request", "Malformed request", "the request could not be read", null, null);
      default -> send(ctx, status < 400 ? 500 : status, "error", "Error", "the request failed", null, null);
    }
  }

  private static void send(RoutingContext ctx, int status, String type, String title, String detail,
      JsonObject extensions, Long retryAfterSeconds) {
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
    if (retryAfterSeconds != null) {
      response.putHeader("Retry-After", Long.toString(retryAfterSeconds));
    }
    response.end(body.encode());
  }
}
