package dev.taskline.queue;

import io.vertx.core.json.JsonObject;
import java.util.UUID;

/**
 * A task waiting in memory, with what a worker needs to claim and run it without reading the
 * journal again. {@code leaseVersion} is the version the journal had when the task was queued;
 * the claim succeeds only if it is still the same.
 */
public record QueuedTask(
    UUID id, String queue, String type, JsonObject payload, int priority, long leaseVersion,
    int attempt, int maxAttempts, Long timeoutMs, long enqueuedAtMillis) {
}
