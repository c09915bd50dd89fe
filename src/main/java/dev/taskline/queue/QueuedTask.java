package dev.taskline.queue;

import dev.taskline.journal.StoredTask;
import java.util.UUID;

/**
 * A task held in memory, with what a worker needs to claim and run it without reading the journal
 * again. {@code leaseVersion} is the version the journal had when the task was queued; the claim
 * succeeds only if it is still the same. {@code dueAtMillis} is when it may run (and from when it
 * ages); {@code attempt} is the number of attempts already made.
 *
 * <p>A full queue holds tens of thousands of these, and each young collection copies the ones that
 * are still waiting, so they are kept small: the payload stays the JSON text it was journaled as
 * (parsed once, when an attempt starts), and the queue and type names, the same few for every
 * task, are shared instances rather than one copy per task. {@code tenant} is null for a task
 * submitted without one.
 */
public record QueuedTask(
    UUID id, String queue, String type, String payloadJson, int priority, long leaseVersion,
    int attempt, int maxAttempts, Long timeoutMs, long dueAtMillis, String tenant) {

  public QueuedTask {
    queue = queue.intern();
    type = type.intern();
  }

  /** A waiting task as the journal gave it back (start-up, page-in, retry). */
  public static QueuedTask from(StoredTask stored) {
    return new QueuedTask(stored.id(), stored.queue(), stored.type(), stored.payloadJson(), stored.priority(),
        stored.leaseVersion(), stored.attempt(), stored.maxAttempts(), stored.timeoutMs(),
        stored.runAt().toEpochMilli(), stored.tenant());
  }

  /** The same task after an attempt ended and it went back to pending. */
  public QueuedTask next(long leaseVersion, int attempt, long dueAtMillis) {
    return new QueuedTask(id, queue, type, payloadJson, priority, leaseVersion, attempt, maxAttempts, timeoutMs,
        dueAtMillis, tenant);
  }
}
