package dev.taskline.queue;

import io.vertx.core.json.JsonObject;
import java.util.UUID;

/**
 * A task held in memory, with what a worker needs to claim and run it without reading the journal
 * again. {@code leaseVersion} is the version the journal had when the task was queued; the claim
 * succeeds only if it is still the same. {@code dueAtMillis} is when it may run (and from when it
 * ages); {@code attempt} is the number of attempts already made.
 */
public record QueuedTask(
    UUID id, String queue, String type, JsonObject payload, int priority, long leaseVersion,
    int attempt, int maxAttempts, Long timeoutMs, long dueAtMillis) {

  /** The same task after an attempt ended and it went back to pending. */
  public QueuedTask next(long leaseVersion, int attempt, long dueAtMillis) {
    return new QueuedTask(id, queue, type, payload, priority, leaseVersion, attempt, maxAttempts, timeoutMs, dueAtMillis);
  }
}
