package dev.taskline.metrics;

import dev.taskline.queue.QueueReadings;
import io.micrometer.core.instrument.Gauge;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import io.micrometer.prometheusmetrics.PrometheusConfig;
import io.micrometer.prometheusmetrics.PrometheusMeterRegistry;
import java.time.Clock;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.TimeUnit;
import java.util.function.IntSupplier;
import java.util.logging.Filter;
import java.util.logging.LogRecord;
import java.util.logging.Logger;

/** The node's meter registry and the per-queue meters, scraped at {@code GET /metrics}. */
public final class TasklineMetrics {

    private final PrometheusMeterRegistry registry = new PrometheusMeterRegistry(PrometheusConfig.DEFAULT);
    private final ScheduleMeters schedules = new ScheduleMeters(registry);
    private final FlowMeters flows = new FlowMeters(registry);
    private final StepMeters steps = new StepMeters(registry);
    private final Map<String, QueueMeters> queues = new ConcurrentHashMap<>();
    private final Map<String, Timer> journalWrites = new ConcurrentHashMap<>();
    private final Clock clock;
    private final Timer acceptLatency;
    private final Timer refusalLatency;

    /**
     * vertx-micrometer-metrics 5.0 registers some of its gauges (event-bus handlers, active
     * connections and requests, pending work) again for every consumer, connection and request it
     * measures: the count lives in a LongAdder of its own, keyed by the meter id, and it relies on
     * Micrometer handing back the gauge already registered, so the values are right
     * (vertx-micrometer-metrics#259, micrometer#6931; Vert.x 5.1.2 still does it). Micrometer logs
     * each such registration, the first in the JVM as a warning, and a clean start hit it at once:
     * every queue's worker consumes the same cancel address. Only those records are dropped, and
     * only for Vert.x's own meters: the gauges stay on {@code /metrics}, and one of ours registered
     * twice by mistake is still reported. Held here, as java.util.logging keeps loggers weakly.
     */
    private static final Logger MICROMETER = Logger.getLogger("io.micrometer.core.instrument.MeterRegistry");

    static {
        Filter existing = MICROMETER.getFilter();
        MICROMETER.setFilter(
                record -> !reRegisteredByVertx(record) && (existing == null || existing.isLoggable(record)));
    }

    static boolean reRegisteredByVertx(LogRecord record) {
        String message = record.getMessage();
        // "This Gauge has been already registered (MeterId{name='vertx.eventbus.handlers', tags=[]}), ..."
        return message != null && message.contains("already registered") && message.contains("name='vertx.");
    }

    public TasklineMetrics(Clock clock) {
        this.clock = clock;
        this.acceptLatency = Timer.builder("taskline.accept.latency")
                .description("From a submission's arrival to its 202, journal commit included")
                .serviceLevelObjectives(Buckets.LATENCY)
                .register(registry);
        // Seen from the server, so that a client's own delays (a load generator on the same cores, a
        // network) can be told apart from the node's when refusals look slow.
        this.refusalLatency = Timer.builder("taskline.refusal.latency")
                .description(
                        "From a submission's arrival to its 429 (queue full, scheduled full, tenant limit, journal busy)")
                // A refusal takes well under a millisecond.
                .serviceLevelObjectives(Buckets.FAST)
                .register(registry);
        // The JVM reports its heap but not what the process holds in memory: direct buffers, thread
        // stacks, code and the allocator's own share, which is what runs out on a small machine.
        if (!Double.isNaN(ResidentMemory.read())) {
            Gauge.builder("process.resident.memory", ResidentMemory::read)
                    .baseUnit("bytes")
                    .description("Resident set size of this process (Linux: VmRSS in /proc/self/status)")
                    .register(registry);
        }
    }

    /** The schedules' tick counters. */
    public StepMeters steps() {
        return steps;
    }

    public FlowMeters flows() {
        return flows;
    }

    public ScheduleMeters schedules() {
        return schedules;
    }

    public MeterRegistry registry() {
        return registry;
    }

    public QueueMeters register(QueueReadings queue) {
        return queues.computeIfAbsent(queue.name(), name -> new QueueMeters(registry, queue, clock));
    }

    public QueueMeters queue(String name) {
        QueueMeters meters = queues.get(name);
        if (meters == null) {
            throw new IllegalArgumentException("no meters for queue " + name);
        }
        return meters;
    }

    public void accepted(long nanos) {
        acceptLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    public void refused(long nanos) {
        refusalLatency.record(nanos, TimeUnit.NANOSECONDS);
    }

    /** One grouped journal statement took {@code nanos}; {@code statement} names it. */
    public void journalWrite(String statement, long nanos) {
        journalWrites
                .computeIfAbsent(
                        statement,
                        s -> Timer.builder("taskline.journal.write")
                                .tag("statement", s)
                                .description("One grouped journal statement, round trip and commit")
                                .serviceLevelObjectives(Buckets.LATENCY)
                                .register(registry))
                .record(nanos, TimeUnit.NANOSECONDS);
    }

    /** How many submissions wait for the insert in progress, read at each scrape. */
    public void waitingInserts(IntSupplier waiting) {
        Gauge.builder("taskline.journal.waiting.inserts", waiting::getAsInt)
                .description("Submissions waiting for the journal's insert in progress")
                .register(registry);
    }

    /**
     * The PostgreSQL connections the node holds open now (its pools and its listening connection),
     * and the most it may: what it takes of the server's max_connections.
     */
    public void journalConnections(IntSupplier open, int most) {
        Gauge.builder("taskline.journal.connections", open::getAsInt)
                .description("PostgreSQL connections the node holds open: its pools and its listening connection")
                .register(registry);
        Gauge.builder("taskline.journal.connections.max", () -> most)
                .description(
                        "The most PostgreSQL connections the node may hold: journal.poolSize + journal.statementsInFlight + 1")
                .register(registry);
    }

    public String scrape() {
        return registry.scrape();
    }
}
