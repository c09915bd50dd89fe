package dev.taskline.metrics;

import dev.taskline.queue.QueueReadings;
import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Clock;
import java.time.Duration;
import java.util.concurrent.TimeUnit;

/**
 * One queue's meters. Every part that moves a task of the queue reports here; the gauges read the
 * queue itself, so they cannot drift from it.
 */
public final class QueueMeters {

    private final Counter accepted;
    private final Counter rejectedFull;
    private final Counter rejectedScheduledFull;
    private final Counter rejectedShuttingDown;
    private final Counter rejectedJournalBusy;
    private final Counter rejectedTenantLimit;
    private final Counter rejectedDeadline;
    private final Counter started;
    private final Counter succeeded;
    private final Counter failed;
    private final Counter cancelled;
    private final Counter expired;
    private final Counter retried;
    private final Counter fenced;
    private final Counter claimsLost;
    private final Counter keysFull;
    private final Counter rateLimited;
    private final Counter takeovers;
    private final Timer waitTime;
    private final Timer fanIn;
    private final Timer runTime;
    private final RateWindow arrivals10;
    private final RateWindow arrivals60;
    private final RateWindow completions10;
    private final RateWindow completions60;
    /** The handlers' recent mean run time on the node's clock (ms), moving; NaN until one returned. */
    private double meanRunMillis = Double.NaN;

    QueueMeters(MeterRegistry registry, QueueReadings queue, Clock clock) {
        String name = queue.name();
        accepted = counter(registry, "taskline.tasks.accepted", name, "Tasks journaled and answered 202");
        rejectedFull = rejected(registry, name, "queue_full");
        rejectedScheduledFull = rejected(registry, name, "scheduled_full");
        rejectedShuttingDown = rejected(registry, name, "shutting_down");
        rejectedJournalBusy = rejected(registry, name, "journal_busy");
        rejectedTenantLimit = rejected(registry, name, "tenant_limit");
        rejectedDeadline = rejected(registry, name, "deadline_unmeetable");
        started = counter(registry, "taskline.tasks.started", name, "Attempts claimed and started");
        succeeded = counter(registry, "taskline.tasks.succeeded", name, "Tasks that ended succeeded");
        failed = counter(registry, "taskline.tasks.failed", name, "Tasks that ended failed (dead letters)");
        cancelled = counter(registry, "taskline.tasks.cancelled", name, "Tasks that ended cancelled");
        expired = counter(
                registry,
                "taskline.tasks.expired",
                name,
                "Tasks that ended expired: not started by their deadline, so never run (counted by the node that expired them)");
        retried = counter(registry, "taskline.tasks.retried", name, "Failed attempts put back for another try");
        fenced = counter(registry, "taskline.tasks.fenced.writes", name, "Writes refused because their lease was lost");
        claimsLost = counter(registry, "taskline.tasks.claims.lost", name, "Claims that found the task already taken");
        keysFull = counter(
                registry,
                "taskline.tasks.key.full",
                name,
                "Claims refused because the task's concurrency key had no room (its tasks running on other nodes)");
        rateLimited = counter(
                registry,
                "taskline.tasks.rate.limited",
                name,
                "Claims refused because the queue's rate limit had no start left in its window (on any node)");
        takeovers = counter(registry, "taskline.tasks.lease.takeovers", name, "Lapsed leases put back to pending");
        waitTime = Timer.builder("taskline.task.wait")
                .tag("queue", name)
                .description("From due (accepted, or its delay over) to started")
                .serviceLevelObjectives(Buckets.LATENCY)
                .register(registry);
        fanIn = Timer.builder("taskline.flow.fan.in")
                .tag("queue", name)
                .description("A flow task's first start, from when its parents let it run (the commit of the"
                        + " last one it waited for, or its delay after it)")
                .serviceLevelObjectives(Buckets.LATENCY)
                .register(registry);
        runTime = Timer.builder("taskline.task.run")
                .tag("queue", name)
                .description("From started to the end of the attempt")
                .serviceLevelObjectives(Buckets.RUN)
                .register(registry);
        Gauge.builder("taskline.queue.waiting", queue, q -> q.counts().waiting())
                .tag("queue", name)
                .description("Tasks due and waiting for a slot")
                .register(registry);
        Gauge.builder("taskline.queue.running", queue, q -> q.counts().running())
                .tag("queue", name)
                .description("Tasks taken by a worker on this node")
                .register(registry);
        Gauge.builder("taskline.queue.scheduled", queue, q -> q.counts().scheduled())
                .tag("queue", name)
                .description("Tasks held until due: delayed, or waiting out a retry's backoff")
                .register(registry);
        Gauge.builder("taskline.queue.paused", queue, q -> q.paused() ? 1 : 0)
                .tag("queue", name)
                .description("1 while an operator has the queue paused: it takes tasks but starts none")
                .register(registry);
        Gauge.builder("taskline.queue.held.by.rate", queue, QueueReadings::heldByRate)
                .tag("queue", name)
                .description("Tasks waiting because the queue's rate limit has no start left in its window")
                .register(registry);
        Gauge.builder("taskline.queue.slots", queue, q -> q.config().slots())
                .tag("queue", name)
                .description("Tasks of this queue that may run at once on this node")
                .register(registry);
        Gauge.builder("taskline.queue.capacity", queue, q -> q.config().capacity())
                .tag("queue", name)
                .description(
                        "Most tasks that may wait in this queue on this node; a submission that does not fit gets 429")
                .register(registry);
        Gauge.builder("taskline.queue.lag.seconds", queue, q -> q.oldestWaitingAgeMs(clock.millis()) / 1000.0)
                .tag("queue", name)
                .description("How long the longest-waiting due task has waited")
                .register(registry);
        arrivals10 = new RateWindow(clock, 10);
        arrivals60 = new RateWindow(clock, 60);
        completions10 = new RateWindow(clock, 10);
        completions60 = new RateWindow(clock, 60);
    }

    private static Counter counter(MeterRegistry registry, String name, String queue, String description) {
        return Counter.builder(name)
                .tag("queue", queue)
                .description(description)
                .register(registry);
    }

    private static Counter rejected(MeterRegistry registry, String queue, String reason) {
        return Counter.builder("taskline.tasks.rejected")
                .tag("queue", queue)
                .tag("reason", reason)
                .description("Submissions refused with 429 or 503, by reason")
                .register(registry);
    }

    public void accepted(int n) {
        accepted.increment(n);
        arrivals10.record(n);
        arrivals60.record(n);
    }

    public void rejectedFull(int n) {
        rejectedFull.increment(n);
    }

    public void rejectedScheduledFull(int n) {
        rejectedScheduledFull.increment(n);
    }

    public void rejectedShuttingDown(int n) {
        rejectedShuttingDown.increment(n);
    }

    public void rejectedJournalBusy(int n) {
        rejectedJournalBusy.increment(n);
    }

    public void rejectedTenantLimit(int n) {
        rejectedTenantLimit.increment(n);
    }

    /** A submission refused because a task of it would not start by its deadline. */
    public void rejectedDeadline(int n) {
        rejectedDeadline.increment(n);
    }

    /** An attempt started {@code waitedMs} after its task was due. */
    public void started(long waitedMs) {
        started.increment();
        waitTime.record(Math.max(0, waitedMs), TimeUnit.MILLISECONDS);
    }

    /** A flow task that waited for parents starts (its handler, or a remote worker's claim), {@code waitedMs} after it could. */
    public void fannedIn(long waitedMs) {
        fanIn.record(Math.max(0, waitedMs), TimeUnit.MILLISECONDS);
    }

    public void ran(long nanos) {
        runTime.record(nanos, TimeUnit.NANOSECONDS);
    }

    /**
     * A handler returned a result or a failure after {@code ran}, read on the node's clock: the pace
     * at which the slots work, for the estimate of when a new task would start. (Timeouts and hand-
     * backs say nothing of it.) A moving mean, so that it follows a change of handlers within a few
     * dozen tasks.
     */
    public synchronized void paced(Duration ran) {
        double millis = ran.toNanos() / 1e6;
        meanRunMillis = Double.isNaN(meanRunMillis) ? millis : meanRunMillis + (millis - meanRunMillis) / 16;
    }

    /** See {@link #paced}; NaN while no handler of the queue has returned on this node. */
    public synchronized double meanRunMillis() {
        return meanRunMillis;
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

    /** A pending task cancelled before it ran. */
    public void cancelledWaiting() {
        cancelled.increment();
    }

    /**
     * A task not started by its deadline ended expired. Not a completion: it freed no slot, and the
     * completion rate is how fast the slots work.
     */
    public void expired() {
        expired.increment();
    }

    public long expiredCount() {
        return (long) expired.count();
    }

    private void finished() {
        completions10.record(1);
        completions60.record(1);
    }

    public void retried() {
        retried.increment();
    }

    public void fenced() {
        fenced.increment();
    }

    public void keyFull() {
        keysFull.increment();
    }

    public void rateLimited() {
        rateLimited.increment();
    }

    public void claimLost() {
        claimsLost.increment();
    }

    public void takeovers(int n) {
        takeovers.increment(n);
    }

    public long rejectedCount() {
        return (long) (rejectedFull.count()
                + rejectedScheduledFull.count()
                + rejectedShuttingDown.count()
                + rejectedJournalBusy.count()
                + rejectedTenantLimit.count()
                + rejectedDeadline.count());
    }

    public long fencedCount() {
        return (long) fenced.count();
    }

    public long takeoverCount() {
        return (long) takeovers.count();
    }

    /** Tasks that ended here per second, over the last 10 s; what Retry-After is computed from. */
    public double completionRate() {
        return completions10.perSecond();
    }

    public Rates rates() {
        return new Rates(
                arrivals10.perSecond(), arrivals60.perSecond(), completions10.perSecond(), completions60.perSecond());
    }

    /** Arrivals (202s) and completions (ended here) per second over 10 s and 60 s. */
    public record Rates(double arrivals10s, double arrivals60s, double completions10s, double completions60s) {}
}
