package dev.taskline.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Supplier;

/** One queue's counters. Every part that moves a task of the queue reports here. */
public final class QueueMeters {

  private final Counter accepted;
  private final Counter rejectedFull;
  private final Counter started;
  private final Counter succeeded;
  private final Counter failed;
  private final Counter cancelled;
  private final Counter retried;
  private final Counter fenced;
  private final Counter claimsLost;
  private final Counter takeovers;
  private final AtomicInteger running = new AtomicInteger();
  private final AtomicLong finished = new AtomicLong();
  private final RateWindow completions;

  QueueMeters(MeterRegistry registry, String queue, Supplier<Number> waiting, int slots, int capacity,
      RateWindow completions) {
    this.completions = completions;
    accepted = counter(registry, "taskline.tasks.accepted", queue, "Tasks journaled and answered 202");
    rejectedFull = Counter.builder("taskline.tasks.rejected").tag("queue", queue).tag("reason", "queue_full")
        .description("Submissions answered 429").register(registry);
    started = counter(registry, "taskline.tasks.started", queue, "Attempts claimed and started");
    succeeded = counter(registry, "taskline.tasks.succeeded", queue, "Tasks that ended succeeded");
    failed = counter(registry, "taskline.tasks.failed", queue, "Tasks that ended failed");
    cancelled = counter(registry, "taskline.tasks.cancelled", queue, "Tasks that ended cancelled while running");
    retried = counter(registry, "taskline.tasks.retried", queue, "Failed attempts put back for another try");
    fenced = counter(registry, "taskline.tasks.fenced.writes", queue, "Writes refused because their lease was lost");
    claimsLost = counter(registry, "taskline.tasks.claims.lost", queue, "Claims that found the task already taken");
    takeovers = counter(registry, "taskline.tasks.lease.takeovers", queue, "Lapsed leases put back to pending");
    Gauge.builder("taskline.queue.waiting", waiting).tag("queue", queue).register(registry);
    Gauge.builder("taskline.queue.running", running, AtomicInteger::get).tag("queue", queue).register(registry);
    Gauge.builder("taskline.queue.slots", () -> slots).tag("queue", queue).register(registry);
    Gauge.builder("taskline.queue.capacity", () -> capacity).tag("queue", queue).register(registry);
  }

  private static Counter counter(MeterRegistry registry, String name, String queue, String description) {
    return Counter.builder(name).tag("queue", queue).description(description).register(registry);
  }

  public void accepted(int n) {
    accepted.increment(n);
  }

  public void rejectedFull(int n) {
    rejectedFull.increment(n);
  }

  public void started() {
    started.increment();
    running.incrementAndGet();
  }

  /** An attempt ended on this node, whatever became of its write. */
  public void stopped() {
    running.decrementAndGet();
  }

  public void succeeded() {
    succeeded.increment();
    finished();
  }

  public void failed() {
    failed.increment();
    finished();
  }

  public void cancelled() {
    cancelled.increment();
    finished();
  }

  public void retried() {
    retried.increment();
  }

  private void finished() {
    finished.incrementAndGet();
    completions.record(1);
  }

  public void fenced() {
    fenced.increment();
  }

  public void claimLost() {
    claimsLost.increment();
  }

  public void takeovers(int n) {
    takeovers.increment(n);
  }

  public int running() {
    return running.get();
  }

  public long acceptedCount() {
    return (long) accepted.count();
  }

  public long finishedCount() {
    return finished.get();
  }

  public long rejectedCount() {
    return (long) rejectedFull.count();
  }

  public long fencedCount() {
    return (long) fenced.count();
  }

  public long takeoverCount() {
    return (long) takeovers.count();
  }

  /** Tasks finished per second over the rate window. */
  public double completionRate() {
    return completions.perSecond();
  }
}
