package dev.taskline.admission;

import io.vertx.core.json.JsonObject;
import java.time.Instant;

/**
 * One task as a client asked for it, already of the right JSON types; null fields take the
 * queue's defaults. At most one of {@code delayMs} and {@code runAt} is set.
 */
public record Submission(String type, JsonObject payload, String queue, Integer priority, Integer maxAttempts,
    Long timeoutMs, Long delayMs, Instant runAt, String concurrencyKey) {

  /** The submission as canonical JSON (keys sorted), for comparing idempotent requests. */
  JsonObject canonical() {
    JsonObject json = new JsonObject().put("type", type).put("payload", payload).put("queue", queue)
        .put("priority", priority).put("maxAttempts", maxAttempts).put("timeoutMs", timeoutMs)
        .put("delayMs", delayMs).put("runAt", runAt == null ? null : runAt.toString())
        .put("concurrencyKey", concurrencyKey);
    return Canonical.sorted(json);
  }
}
