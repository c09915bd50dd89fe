package dev.taskline.journal;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.UUID;

/**
 * A task as admitted, before its insert; {@code batchId} is null for a single submission.
 * {@code dispatchTo} names the worker that takes it at once (inserted claimed, lease until
 * {@code leaseUntil}), or is null for a task that waits in line.
 */
public record NewTask(
    UUID id, String queue, String type, JsonObject payload, int priority, Instant runAt,
    int maxAttempts, Long timeoutMs, UUID batchId, String dispatchTo, Instant leaseUntil) {

  public NewTask(UUID id, String queue, String type, JsonObject payload, int priority, Instant runAt,
      int maxAttempts, Long timeoutMs, UUID batchId) {
    this(id, queue, type, payload, priority, runAt, maxAttempts, timeoutMs, batchId, null, null);
  }

  /** The same task, to be inserted claimed by {@code workerId}. */
  public NewTask dispatched(String workerId, Instant leaseUntil) {
    return new NewTask(id, queue, type, payload, priority, runAt, maxAttempts, timeoutMs, batchId, workerId, leaseUntil);
  }

  /** The lease a dispatched task starts with: version 1, attempt 1. */
  public Lease lease() {
    return dispatchTo == null ? null : new Lease(id, dispatchTo, 1, 1);
  }
}
