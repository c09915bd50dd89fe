package dev.taskline.journal;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.UUID;

/** A waiting task read back from the journal (start-up and page-in). */
public record StoredTask(
    UUID id, String queue, String type, JsonObject payload, int priority, long leaseVersion,
    int attempt, int maxAttempts, Long timeoutMs, Instant runAt) {
}
