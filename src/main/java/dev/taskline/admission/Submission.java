package dev.taskline.admission;

import io.vertx.core.json.JsonObject;
import java.time.Instant;

/**
 * One task as a client asked for it, already of the right JSON types; null fields take the
 * queue's defaults. At most one of {@code delayMs} and {@code runAt} is set; at most one of {@code
 * startBy} and {@code startWithinMs} (the deadline of its first start, absolute or counted from
 * when it is due), which admission checks.
 */
public record Submission(
        String type,
        JsonObject payload,
        String queue,
        Integer priority,
        Integer maxAttempts,
        Long timeoutMs,
        Long delayMs,
        Instant runAt,
        String concurrencyKey,
        Instant startBy,
        Long startWithinMs) {

    /** The submission as canonical JSON (keys sorted), for comparing idempotent requests. */
    public JsonObject canonical() {
        JsonObject json = new JsonObject()
                .put("type", type)
                .put("payload", payload)
                .put("queue", queue)
                .put("priority", priority)
                .put("maxAttempts", maxAttempts)
                .put("timeoutMs", timeoutMs)
                .put("delayMs", delayMs)
                .put("runAt", runAt == null ? null : runAt.toString())
                .put("concurrencyKey", concurrencyKey)
                .put("startBy", startBy == null ? null : startBy.toString())
                .put("startWithinMs", startWithinMs);
        return Canonical.sorted(json);
    }
}
