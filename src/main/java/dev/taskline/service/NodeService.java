package dev.taskline.service;

import static dev.taskline.service.Permits.permitted;

import dev.taskline.admission.Admission;
import dev.taskline.control.QueuePauses;
import dev.taskline.journal.JournalReads;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.NodeRecord;
import dev.taskline.model.QueueControl;
import dev.taskline.model.TenantCounts;
import dev.taskline.model.problem.NotFoundException;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueReadings;
import dev.taskline.service.Views.QueueView;
import dev.taskline.service.Views.Readiness;
import dev.taskline.service.Views.Stats;
import io.vertx.core.Future;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * The node as a caller sees it: its queues and their counts (a tenant's key sees its own tasks'),
 * the pause switches, the stats, whether it is ready, its metrics.
 */
public final class NodeService {

    private static final long READY_TIMEOUT_MS = 2_000;

    private final Admission admission;
    private final JournalReads reads;
    private final NodeQueues<? extends QueueReadings> queues;
    private final TasklineMetrics metrics;
    private final QueuePauses pauses;
    private final Clock clock;
    private final String nodeId;
    private final Supplier<Future<List<NodeRecord>>> registry;
    // A tenant's counts walk all its tasks in the journal: one read in flight per tenant at most, shared
    // by every caller meanwhile (one that comes after it answered reads anew, and sees its own writes,
    // unless the counts are read on a replica that has not replayed them yet: journal.readUrl).
    private final SharedReads<String, List<TenantCounts>> tenantCounts;

    /** @param registry the journal's node registry: live nodes, then those gone within the last hour */
    public NodeService(
            Admission admission,
            JournalReads reads,
            NodeQueues<? extends QueueReadings> queues,
            TasklineMetrics metrics,
            QueuePauses pauses,
            Clock clock,
            String nodeId,
            Supplier<Future<List<NodeRecord>>> registry) {
        this.admission = admission;
        this.reads = reads;
        this.queues = queues;
        this.metrics = metrics;
        this.pauses = pauses;
        this.clock = clock;
        this.nodeId = nodeId;
        this.registry = registry;
        this.tenantCounts = new SharedReads<>(
                tenant -> reads.tenantCounts(tenant, clock.instant()), java.time.Duration.ZERO, clock);
    }

    /** The nodes on this journal, as the registry lists them, and which one answers: an admin's call. */
    public Future<Nodes> nodes(Caller caller) {
        return permitted(() -> caller.require(Scope.ADMIN))
                .compose(v -> registry.get())
                .map(list -> new Nodes(nodeId, list));
    }

    /** The registry's list, and the node that read it. */
    public record Nodes(String self, List<NodeRecord> nodes) {}

    /**
     * Every queue of this node, by name: this node's custody and meters, or, for a tenant's key, that
     * tenant's tasks as the journal holds them (another tenant's counts are not its business).
     */
    public Future<List<QueueView>> queues(Caller caller) {
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> caller.seesEveryTenant()
                        ? Future.succeededFuture(nodeQueues(caller))
                        : tenantCounts.get(caller.tenant()).map(counts -> tenantQueues(caller, counts)));
    }

    /**
     * Pauses ({@code paused}) or resumes a queue on every node: an admin's call. The answer comes once
     * this node applies it; the others follow within a second.
     */
    public Future<QueueControl> pause(Caller caller, String queue, boolean paused) {
        return permitted(() -> {
                    caller.require(Scope.ADMIN);
                    if (queues.get(queue) == null) {
                        throw NotFoundException.queue(queue);
                    }
                })
                .compose(v -> pauses.set(queue, paused, caller.keyId()));
    }

    /** A queue's switch as {@code caller} may see it: who set it is an admin's to know. */
    private QueueControl control(Caller caller, String queue) {
        QueueControl control = pauses.control(queue);
        return caller.isAdmin() ? control : control.withoutActor();
    }

    private List<QueueView> tenantQueues(Caller caller, List<TenantCounts> counts) {
        java.util.Map<String, TenantCounts> byQueue = new java.util.HashMap<>();
        counts.forEach(c -> byQueue.put(c.queue(), c));
        List<QueueView> list = new ArrayList<>();
        for (QueueReadings queue : queues.all()) {
            TenantCounts c = byQueue.getOrDefault(queue.name(), new TenantCounts(queue.name(), 0, 0, 0, 0, 0, 0));
            list.add(new QueueView(
                    queue.name(),
                    c.waiting(),
                    c.running(),
                    c.scheduled(),
                    queue.config().slots(),
                    queue.config().capacity(),
                    queue.config().scheduledCapacity(),
                    queue.config().tenantLimit(),
                    c.accepted(),
                    c.finished(),
                    c.waiting() + c.scheduled() + c.running(),
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    control(caller, queue.name()),
                    queue.config().keyLimits(),
                    null,
                    queue.config().rateLimit(),
                    null,
                    c.expired()));
        }
        return list;
    }

    private List<QueueView> nodeQueues(Caller caller) {
        long now = clock.millis();
        List<QueueView> list = new ArrayList<>();
        for (QueueReadings queue : queues.all()) {
            QueueReadings.Counts counts = queue.counts();
            QueueMeters meters = metrics.queue(queue.name());
            list.add(new QueueView(
                    queue.name(),
                    counts.waiting(),
                    counts.running(),
                    counts.scheduled(),
                    queue.config().slots(),
                    queue.config().capacity(),
                    queue.config().scheduledCapacity(),
                    queue.config().tenantLimit(),
                    counts.accepted(),
                    counts.finished(),
                    counts.unfinished(),
                    meters.rejectedCount(),
                    meters.fencedCount(),
                    meters.takeoverCount(),
                    queue.oldestWaitingAgeMs(now) / 1000.0,
                    meters.rates(),
                    counts.claimedAhead(),
                    counts.finishing(),
                    control(caller, queue.name()),
                    queue.config().keyLimits(),
                    queue.heldByKeys(),
                    queue.config().rateLimit(),
                    queue.heldByRate(),
                    meters.expiredCount()));
        }
        return list;
    }

    /** The node's queues added up (a tenant's key: its tasks', as {@link #queues}). */
    public Future<Stats> stats(Caller caller) {
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> caller.seesEveryTenant()
                        ? Future.succeededFuture(nodeStats())
                        : queues(caller)
                                .map(list -> new Stats(
                                        list.stream()
                                                .mapToLong(QueueView::accepted)
                                                .sum(),
                                        list.stream()
                                                .mapToLong(QueueView::finished)
                                                .sum(),
                                        null,
                                        list.stream()
                                                .mapToLong(QueueView::waiting)
                                                .sum(),
                                        list.stream()
                                                .mapToLong(QueueView::scheduled)
                                                .sum(),
                                        list.stream()
                                                .mapToLong(QueueView::running)
                                                .sum(),
                                        null,
                                        list.stream()
                                                .mapToLong(QueueView::expired)
                                                .sum())));
    }

    private Stats nodeStats() {
        long accepted = 0;
        long finished = 0;
        long rejected = 0;
        long expired = 0;
        int waiting = 0;
        int scheduled = 0;
        int running = 0;
        double[] rates = new double[4];
        for (QueueReadings queue : queues.all()) {
            // Each queue's counts are one consistent reading; sums of consistent readings balance too.
            QueueReadings.Counts counts = queue.counts();
            QueueMeters meters = metrics.queue(queue.name());
            accepted += counts.accepted();
            finished += counts.finished();
            waiting += counts.waiting();
            scheduled += counts.scheduled();
            running += counts.running();
            rejected += meters.rejectedCount();
            expired += meters.expiredCount();
            QueueMeters.Rates r = meters.rates();
            rates[0] += r.arrivals10s();
            rates[1] += r.arrivals60s();
            rates[2] += r.completions10s();
            rates[3] += r.completions60s();
        }
        return new Stats(
                accepted,
                finished,
                rejected,
                waiting,
                scheduled,
                running,
                new QueueMeters.Rates(rates[0], rates[1], rates[2], rates[3]),
                expired);
    }

    /** Up while the node takes work and its journal answers within two seconds. */
    public Future<Readiness> readiness() {
        if (admission.draining()) {
            return Future.succeededFuture(Readiness.SHUTTING_DOWN);
        }
        return reads.ping()
                .timeout(READY_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .map(v -> Readiness.UP)
                .otherwise(e -> Readiness.JOURNAL_DOWN);
    }

    /**
     * The node's metrics in the Prometheus text format. Blocking: writing every series takes 10 to
     * 25 ms of CPU, so callers run it off their event loop.
     */
    public String scrapeMetrics(Caller caller) {
        // Every queue's and tenant's figures: an admin's, unless the node opens them (auth.openMetrics).
        caller.require(Scope.ADMIN);
        return metrics.scrape();
    }
}
