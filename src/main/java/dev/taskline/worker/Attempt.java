package dev.taskline.worker;

import dev.taskline.handler.TaskContext;
import dev.taskline.journal.Journal;
import dev.taskline.journal.Lease;
import dev.taskline.queue.QueuedTask;
import io.vertx.core.Context;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.UUID;

/**
 * One attempt at a task: the handler's view of it, the lease heartbeat and throttled progress
 * writes. All its state lives on the worker's event loop; {@link #progress} may be called from
 * any thread (blocking handlers) and hops there.
 */
final class Attempt implements TaskContext {

  private final Vertx vertx;
  private final Context context;
  private final Journal journal;
  private final QueuedTask task;
  private final Lease lease;
  private final long progressIntervalNanos;
  private final long heartbeatTimer;

  private boolean ended;
  private boolean leaseLost;
  private int percent = -1;
  private String message;
  private boolean dirty;
  private boolean writing;
  private long progressTimer = -1;
  private long lastWriteNanos;

  Attempt(Vertx vertx, Context context, Journal journal, QueuedTask task, Lease lease, Duration leaseFor,
      long heartbeatMs, long progressIntervalMs) {
    this.vertx = vertx;
    this.context = context;
    this.journal = journal;
    this.task = task;
    this.lease = lease;
    // The throttle is a rate limit, not business time, so it runs on the monotonic clock: an
    // injected test clock that stands still must not stop progress from being written.
    this.progressIntervalNanos = Duration.ofMillis(progressIntervalMs).toNanos();
    this.lastWriteNanos = System.nanoTime() - progressIntervalNanos;
    this.heartbeatTimer = vertx.setPeriodic(heartbeatMs, id -> heartbeat(leaseFor));
  }

  @Override
  public UUID taskId() {
    return task.id();
  }

  @Override
  public int attempt() {
    return lease.attempt();
  }

  @Override
  public JsonObject payload() {
    return task.payload();
  }

  @Override
  public Vertx vertx() {
    return vertx;
  }

  @Override
  public void progress(int percent, String message) {
    int clamped = Math.max(0, Math.min(100, percent));
    String text = message == null ? null : message.length() > 500 ? message.substring(0, 500) : message;
    if (Vertx.currentContext() == context) {
      onProgress(clamped, text);
    } else {
      context.runOnContext(v -> onProgress(clamped, text));
    }
  }

  /** Whether the journal has told us our lease is gone; the attempt's writes no longer land. */
  boolean leaseLost() {
    return leaseLost;
  }

  void end() {
    ended = true;
    vertx.cancelTimer(heartbeatTimer);
    if (progressTimer != -1) {
      vertx.cancelTimer(progressTimer);
    }
  }

  private void heartbeat(Duration leaseFor) {
    if (ended || leaseLost) {
      return;
    }
    journal.heartbeat(lease, leaseFor).onSuccess(held -> {
      if (!held) {
        leaseLost = true;
        vertx.cancelTimer(heartbeatTimer);
      }
    });
  }

  private void onProgress(int percent, String message) {
    if (ended || leaseLost) {
      return;
    }
    this.percent = percent;
    this.message = message;
    dirty = true;
    writeProgress();
  }

  private void writeProgress() {
    if (!dirty || writing || progressTimer != -1 || ended || leaseLost) {
      return;
    }
    long waitNanos = lastWriteNanos + progressIntervalNanos - System.nanoTime();
    if (waitNanos > 0) {
      progressTimer = vertx.setTimer(Math.max(1, waitNanos / 1_000_000), id -> {
        progressTimer = -1;
        writeProgress();
      });
      return;
    }
    dirty = false;
    writing = true;
    lastWriteNanos = System.nanoTime();
    journal.progress(lease, percent, message).onComplete(done -> {
      writing = false;
      if (done.succeeded() && !done.result()) {
        leaseLost = true;
      }
      writeProgress();
    });
  }
}
