package dev.taskline.journal;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.UUID;

/** A task as admitted, before its insert; {@code batchId} is null for a single submission. */
public record NewTask(
    UUID id, String queue, String type, JsonObject payload, int priority, Instant runAt,
    int maxAttempts, Long timeoutMs, UUID batchId) {
}
