package dev.taskline.journal;

import java.time.Instant;
import java.util.UUID;

/**
 * A task as admitted, before its insert; {@code batchId} is null for a single submission.
 * {@code dispatchTo} names the worker that takes it at once (inserted claimed, lease until
 * {@code leaseUntil}), or is null for a task that waits in line. {@code payloadJson} is the payload
 * as JSON text: encoded once, it is both what the journal stores and what the queue holds.
 * {@code tenant} is null for a task submitted without one.
 */
public record NewTask(
    UUID id, String queue, String type, String payloadJson, int priority, Instant runAt,
    int maxAttempts, Long timeoutMs, UUID batchId, String tenant, String dispatchTo, Instant leaseUntil) {

  public NewTask(UUID id, String queue, String type, String payloadJson, int priority, Instant runAt,
      int maxAttempts, Long timeoutMs, UUID batchId, String tenant) {
    this(id, queue, type, payloadJson, priority, runAt, maxAttempts, timeoutMs, batchId, tenant, null, null);
  }

  public NewTask(UUID id, String queue, String type, String payloadJson, int priority, Instant runAt,
      int maxAttempts, Long timeoutMs, UUID batchId) {
    this(id, queue, type, payloadJson, priority, runAt, maxAttempts, timeoutMs, batchId, null);
  }

  /** The same task, to be inserted claimed by {@code workerId}. */
  public NewTask dispatched(String workerId, Instant leaseUntil) {
    return new NewTask(id, queue, type, payloadJson, priority, runAt, maxAttempts, timeoutMs, batchId, tenant, workerId,
        leaseUntil);
  }

  /** The lease a dispatched task starts with: version 1, attempt 1. */
  public Lease lease() {
    return dispatchTo == null ? null : new Lease(id, dispatchTo, 1, 1);
  }
}
