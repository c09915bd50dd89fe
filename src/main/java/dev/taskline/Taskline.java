package dev.taskline;

import dev.taskline.admission.Admission;
import dev.taskline.auth.ApiKeys;
import dev.taskline.auth.SessionRevocations;
import dev.taskline.auth.SessionTokens;
import dev.taskline.auth.StreamTokens;
import dev.taskline.cluster.Cluster;
import dev.taskline.cluster.QueueDefinitions;
import dev.taskline.config.TasklineConfig;
import dev.taskline.control.DeadlineSweep;
import dev.taskline.control.QueuePauses;
import dev.taskline.control.TaskControl;
import dev.taskline.events.EventHub;
import dev.taskline.handler.HandlerRegistry;
import dev.taskline.http.Authentication;
import dev.taskline.http.HttpVerticle;
import dev.taskline.journal.EmbeddedPostgresServer;
import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalConnections;
import dev.taskline.journal.JournalControls;
import dev.taskline.journal.JournalFlows;
import dev.taskline.journal.JournalKeys;
import dev.taskline.journal.JournalNodes;
import dev.taskline.journal.JournalReads;
import dev.taskline.journal.JournalSchedules;
import dev.taskline.journal.JournalSteps;
import dev.taskline.journal.JournalUnits;
import dev.taskline.journal.Migrator;
import dev.taskline.journal.Servers;
import dev.taskline.journal.StatementTimeouts;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.queue.Promoter;
import dev.taskline.queue.QueueCustody;
import dev.taskline.queue.QueueRegistry;
import dev.taskline.queue.TaskQueue;
import dev.taskline.recovery.Recovery;
import dev.taskline.recovery.RecoveryVerticle;
import dev.taskline.recovery.Retention;
import dev.taskline.recovery.WakeUps;
import dev.taskline.schedule.Scheduler;
import dev.taskline.schedule.Schedules;
import dev.taskline.service.DurableService;
import dev.taskline.service.FlowService;
import dev.taskline.service.KeyService;
import dev.taskline.service.NodeService;
import dev.taskline.service.ScheduleService;
import dev.taskline.service.Services;
import dev.taskline.service.TaskService;
import dev.taskline.service.WorkService;
import dev.taskline.support.Periodic;
import dev.taskline.support.Version;
import dev.taskline.worker.AnswerBounds;
import dev.taskline.worker.AttemptParts;
import dev.taskline.worker.RemoteWorkers;
import dev.taskline.worker.Suspensions;
import dev.taskline.worker.WorkerVerticle;
import dev.taskline.workflow.BlockedCount;
import dev.taskline.workflow.FlowSettlements;
import dev.taskline.workflow.Flows;
import dev.taskline.workflow.Spawns;
import dev.taskline.workflow.Waker;
import io.vertx.core.DeploymentOptions;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.Clock;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HexFormat;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.concurrent.ThreadLocalRandom;
import java.util.function.Consumer;
import java.util.function.DoubleSupplier;
import java.util.logging.Logger;

/**
 * One Taskline node: it wires the parts together and deploys them in order, as one chain. Tests
 * start nodes through here with their own clock and configuration.
 */
public final class Taskline {

    private static final Logger LOG = Logger.getLogger(Taskline.class.getName());

    private final Vertx vertx;
    private final String nodeId;
    private final EmbeddedPostgresServer embedded;
    private final Pool pool;
    /** One connection: inserts go one statement at a time (see Journal's group commit). */
    private final Pool insertPool;
    /** The read replica's pool (journal.readUrl), or {@link #pool} when there is none. */
    private final Pool readPool;

    private final Journal journal;
    private JournalFlows flows;
    private volatile BlockedCount blocked;
    private Spawns spawns;
    private JournalSteps steps;
    private Waker waker;
    private Suspensions suspensions;
    private final JournalReads reads;
    private final QueueRegistry queues;
    private final TasklineMetrics metrics;
    private final Recovery recovery;
    private final Retention retention;
    private final Promoter promoter;
    private final QueuePauses pauses;
    private final DeadlineSweep deadlines;
    private final Clock clock;
    private final TasklineConfig config;
    private final List<String> deployments = new ArrayList<>();
    private final List<WorkerVerticle> workers = new ArrayList<>();
    private DoubleSupplier jitter = () -> ThreadLocalRandom.current().nextDouble();
    private Admission admission;
    private EventHub hub;
    private JournalSignalRoutes journalSignals;
    private Services services;
    private Passes passes;
    private Scheduler scheduler;
    private Schedules schedules;
    private RemoteWorkers remote;
    private AttemptParts attemptParts;
    private final ApiKeys keys;
    private final SessionRevocations revocations;
    private final Cluster cluster;
    private final WakeUps wakeUps;
    /** How often streams ask the journal about writes made by other nodes, when no notification tells them. */
    private static final long CATCH_UP_MS = 2_000;
    /** How often the upkeep's holder deletes finished tasks past retention, and registry rows long gone. */
    private static final long RETENTION_MS = 60_000;
    /** How often the journal's blocked flow tasks are counted, for flows.maxBlocked. */
    private static final long BLOCKED_COUNT_MS = 2_000;
    /** How often a node reads the keys issued through the API, when no notification tells it of a change. */
    private static final long KEYS_REFRESH_MS = 1_000;
    /** Events are kept a day (their ids, and waits that come late); a pass a minute deletes the older. */
    private static final long EVENTS_CLEAN_MS = 60_000;
    /** How often a node reads the queues' switches, when no notification tells it of a change. */
    private static final long CONTROLS_REFRESH_MS = 500;
    /**
     * How often overdue tasks are expired. Claims refuse them meanwhile on their own; this bounds how
     * long one still shows pending, and holds its place, after its deadline.
     */
    private static final long DEADLINE_SWEEP_MS = 250;

    private final List<HttpVerticle> httpInstances = new CopyOnWriteArrayList<>();

    private Taskline(
            Vertx vertx,
            TasklineConfig config,
            Clock clock,
            TasklineMetrics metrics,
            EmbeddedPostgresServer embedded,
            String pgUrl) {
        this.vertx = vertx;
        this.nodeId =
                "node-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
        this.embedded = embedded;
        // One choice of server for the node's pools and, on the same URL, its listening connection.
        Servers servers = JournalConnections.servers(vertx, pgUrl);
        StatementTimeouts timeouts = new StatementTimeouts(
                config.journal().statementTimeoutMs(), config.journal().lockTimeoutMs());
        this.pool = JournalConnections.pool(vertx, servers, config.journal().poolSize(), timeouts);
        this.metrics = metrics;
        this.insertPool =
                JournalConnections.insertPool(vertx, servers, config.journal().statementsInFlight(), timeouts);
        this.journal = new Journal(
                pool,
                insertPool,
                clock,
                metrics::journalWrite,
                config.journal().maxWaitingInserts(),
                config.journal().statementsInFlight());
        // Lists may be read on a replica, a little behind; a task's own read, streams and claims never are.
        this.readPool = config.journal().readUrl() == null
                ? pool
                : JournalConnections.pool(
                        vertx,
                        JournalConnections.servers(vertx, config.journal().readUrl()),
                        config.journal().readPoolSize(),
                        timeouts);
        this.reads = new JournalReads(
                pool, readPool, config.http().maxInlineBytes(), config.http().maxPageBytes());
        this.keys = new ApiKeys(config.auth());
        metrics.waitingInserts(journal::waitingInserts);
        // The blocked count is read once the journal is up; until then no flow has been admitted here.
        this.queues = new QueueRegistry(config.queues().values(), (queue, tenant) -> {
            BlockedCount count = blocked;
            return count == null ? 0 : count.of(queue, tenant);
        });
        for (TaskQueue queue : queues.all()) {
            metrics.register(queue);
        }
        this.recovery = new Recovery(
                journal,
                queues,
                metrics,
                config.recovery().batchSize(),
                Duration.ofMillis(config.retention().finishedTaskTtlMs()));
        this.retention = new Retention(
                new JournalUnits(pool),
                journal,
                clock,
                config.retention(),
                config.recovery().batchSize());
        this.promoter = new Promoter(queues, clock);
        this.pauses = new QueuePauses(new JournalControls(pool, clock), queues);
        this.deadlines =
                new DeadlineSweep(journal, queues, metrics, config.recovery().batchSize());
        this.clock = clock;
        this.revocations = new SessionRevocations(clock);
        this.config = config;
        this.cluster = new Cluster(
                config.cluster(),
                new JournalNodes(pool),
                config.cluster().listenUrl() != null
                        ? JournalConnections.servers(vertx, config.cluster().listenUrl())
                        : servers,
                nodeId,
                Version.current(),
                QueueDefinitions.of(config.queues().values()),
                () -> hub == null ? 0 : hub.openStreams(),
                () -> pool.size() + insertPool.size());
        metrics.journalConnections(cluster::connections, config.journal().connections());
        this.wakeUps =
                new WakeUps(journal, queues, this::startable, config.recovery().batchSize());
    }

    /** How many tasks of {@code queue} this node could start now: what a wake-up pages in. */
    private Future<Integer> startable(QueueCustody queue) {
        int free = queue.startableNow();
        if (free == 0 || !queue.config().remote()) {
            return Future.succeededFuture(free);
        }
        return remote.wanted(queue.name()).map(wanted -> Math.min(free, Math.max(0, wanted - queue.waiting())));
    }

    /** Starts a node: journal (embedded unless a URL is configured), migrations, workers, recovery, API. */
    public static Future<Taskline> start(Vertx vertx, TasklineConfig config, Clock clock) {
        return start(vertx, config, clock, new TasklineMetrics(clock), null);
    }

    /**
     * As {@link #start(Vertx, TasklineConfig, Clock)}, with the meter registry given (so that Vert.x
     * itself can report to it) and the source of retry jitter (draws from [0, 1]; null for random),
     * so that tests can make backoff delays exact.
     */
    public static Future<Taskline> start(
            Vertx vertx, TasklineConfig config, Clock clock, TasklineMetrics metrics, DoubleSupplier jitter) {
        Future<EmbeddedPostgresServer> embedded = config.journal().pgUrl() != null
                ? Future.succeededFuture(null)
                // Starting PostgreSQL takes seconds and blocks; it runs on a worker thread.
                : vertx.executeBlocking(
                        () -> EmbeddedPostgresServer.start(config.journal().dataDir()), false);
        return embedded.compose(server -> {
            String url = server == null ? config.journal().pgUrl() : server.url();
            Taskline node = new Taskline(vertx, config, clock, metrics, server, url);
            if (jitter != null) {
                node.jitter = jitter;
            }
            return node.deploy(config)
                    .recover(e -> node.close()
                            .transform(ignored ->
                                    Future.failedFuture(JournalConnections.explainStart(e, config.journal()))));
        });
    }

    private Future<Taskline> deploy(TasklineConfig config) {
        // Reads the handler jars: files, so not on an event loop.
        return vertx.executeBlocking(
                        () -> HandlerRegistry.load(config.handlers().dir()), false)
                .compose(handlers -> deploy(config, handlers));
    }

    private Future<Taskline> deploy(TasklineConfig config, HandlerRegistry handlers) {
        flows = new JournalFlows(journal, readPool);
        steps = new JournalSteps(pool, clock, config.durable());
        waker = new Waker(steps, queues, clock, config.recovery().batchSize(), metrics.steps());
        suspensions = new Suspensions(journal, steps, waker, metrics.steps());
        admission = new Admission(config, queues, handlers, journal, metrics, clock);
        blocked = new BlockedCount(
                flows,
                config.flows().maxBlocked(),
                TasklineConfig.share(config.flows().maxBlocked(), config.http().tenantShare()));
        spawns = new Spawns(admission, blocked, config.flows().maxTasks());
        EventHub hub = new EventHub(vertx, reads, config.http().maxStreams(), cluster::following);
        journalSignals = new JournalSignalRoutes(hub, cluster, new FlowSettlements(queues, metrics.flows(), clock));
        journal.signals(journalSignals);
        this.hub = hub;
        TaskControl control = new TaskControl(journal, reads, queues, vertx.eventBus(), metrics);
        attemptParts = new AttemptParts(
                journal,
                flows,
                spawns,
                suspensions,
                hub::progress,
                clock,
                () -> jitter.getAsDouble(),
                AnswerBounds.of(config));
        remote = new RemoteWorkers(
                queues.all().stream().filter(q -> q.config().remote()).toList(),
                attemptParts,
                reads,
                metrics,
                config.recovery().intervalMs(),
                config.http().maxWaitingClaims(),
                TasklineConfig.share(
                        config.http().maxWaitingClaims(), config.http().tenantShare()));
        JournalSchedules journalSchedules = new JournalSchedules(journal);
        scheduler = new Scheduler(
                journalSchedules,
                admission,
                metrics.schedules(),
                clock,
                nodeId,
                Duration.ofMillis(config.scheduling().graceMs()),
                config.scheduling().maxCatchUp());
        schedules = new Schedules(journalSchedules, admission, scheduler, clock);
        KeyService keyService = new KeyService(keys, revocations, new JournalKeys(pool, clock));
        TaskService taskService = new TaskService(
                admission,
                control,
                reads,
                hub,
                config.http().maxStreams(),
                config.http().tenantShare());
        Flows flowAdmission = new Flows(admission, flows, blocked, config.flows(), metrics.flows(), clock);
        services = new Services(
                taskService,
                new FlowService(flowAdmission, flows, control, taskService),
                new NodeService(admission, reads, queues, metrics, pauses, clock, nodeId, cluster::nodes),
                new ScheduleService(schedules),
                keyService,
                new WorkService(queues, remote, clock),
                new DurableService(steps, admission, config.triggers(), waker, metrics.steps()));
        passes = new Passes(
                recovery,
                retention,
                promoter,
                pauses,
                deadlines,
                scheduler,
                remote,
                hub,
                keyService,
                blocked,
                waker,
                cluster,
                wakeUps);
        RecoveryVerticle recoveryLoop =
                new RecoveryVerticle(recovery, config.recovery().intervalMs());
        // Before anything comes into a queue: the one place where the queues learn who hears them.
        QueueSignalRoutes signals = new QueueSignalRoutes(promoter, recoveryLoop, remote, cluster, wakeUps);
        queues.signals(signals);
        // Before the listening connection is deployed: the one place where the cluster learns who hears it.
        cluster.signals(new ClusterSignalRoutes(wakeUps, queues, scheduler, pauses, keyService, hub));
        return Migrator.migrate(vertx, pool)
                // Before this node hands out an id: the units its clock's ids fall in are there.
                .compose(applied -> retention.makeAhead())
                // Before anything is taken: a node that disagrees with a live one on a queue stops here.
                .compose(applied -> cluster.join(config.cluster().address()))
                // A queue paused before this node started must not start anything on it, even once.
                .compose(v -> pauses.runOnce())
                .compose(v -> schedules.declare(declared(config)))
                .compose(v -> deployWorkers(handlers, config, signals))
                .compose(v -> track(vertx.deployVerticle(cluster.heartbeats())))
                // A journal that does not answer leaves the switches as last read.
                .compose(v -> track(vertx.deployVerticle(
                        cluster.fallback("reading the queue switches", CONTROLS_REFRESH_MS, pauses::runOnce))))
                .compose(v -> track(vertx.deployVerticle(
                        cluster.upkeep("expiring tasks past their deadlines", DEADLINE_SWEEP_MS, deadlines::runOnce))))
                .compose(v -> blocked.runOnce())
                .compose(v -> track(vertx.deployVerticle(
                        new Periodic("counting blocked flow tasks", BLOCKED_COUNT_MS, blocked::runOnce))))
                .compose(v -> track(vertx.deployVerticle(promoter)))
                .compose(v -> track(vertx.deployVerticle(waker)))
                .compose(v -> track(vertx.deployVerticle(cluster.upkeep(
                        "deleting events older than a day, and event fields no task waits on",
                        EVENTS_CLEAN_MS,
                        () -> steps.deleteOldEvents(clock.instant().minus(Duration.ofDays(1)), 10_000)
                                .compose(n -> steps.deleteUnwaitedFields(
                                        clock.instant().minus(Duration.ofHours(1)), 10_000))))))
                .compose(v -> track(vertx.deployVerticle(cluster.upkeep(
                        "making the journal's units ahead, dropping those past retention, and nodes long gone",
                        RETENTION_MS,
                        () -> retention.runOnce().compose(n -> cluster.forgetOld())))))
                .compose(v -> track(vertx.deployVerticle(
                        cluster.fallback("catching streams up with other nodes' writes", CATCH_UP_MS, hub::catchUp))))
                .compose(v -> track(vertx.deployVerticle(recoveryLoop)))
                .compose(v -> track(vertx.deployVerticle(scheduler)))
                .compose(v -> keyService.refresh())
                // Keys issued or revoked through any node's API reach this one at once through the
                // listening connection, or within a second without it. A journal that does not answer
                // keeps the keys last read.
                .compose(v -> track(vertx.deployVerticle(
                        cluster.fallback("reading the keys", KEYS_REFRESH_MS, keyService::refresh))))
                .compose(v -> track(vertx.deployVerticle(cluster.listener())))
                // Stream tokens signed by one node open streams on any: the secret is the journal's.
                .compose(v -> journal.sharedSecret(StreamTokens.SECRET))
                .compose(streamSecret -> {
                    // One deployment of N instances: Vert.x shares their listening socket (a random port too)
                    // and hands each new connection to the next instance's event loop.
                    // One secret for stream and session tokens: their texts begin differently, so neither
                    // can be taken for the other.
                    Authentication authentication = new Authentication(
                            config.auth(),
                            keys,
                            new StreamTokens(streamSecret, clock),
                            new SessionTokens(streamSecret, clock),
                            revocations,
                            config.http().proxies(),
                            clock);
                    return track(vertx.deployVerticle(
                            () -> {
                                HttpVerticle instance = new HttpVerticle(config, services, metrics, authentication);
                                httpInstances.add(instance);
                                return instance;
                            },
                            new DeploymentOptions().setInstances(config.http().instances())));
                })
                .compose(v -> cluster.address(
                        config.cluster().address() != null
                                ? config.cluster().address()
                                : "http://" + config.http().host() + ":" + httpPort()))
                .map(v -> {
                    LOG.info(nodeId + " listening on http://" + config.http().host() + ":" + httpPort()
                            + (httpInstances.size() > 1 ? " (" + httpInstances.size() + " HTTP event loops)" : ""));
                    return this;
                });
    }

    private static Map<String, JsonObject> declared(TasklineConfig config) {
        Map<String, JsonObject> declared = new LinkedHashMap<>();
        config.scheduling().declared().forEach((name, json) -> declared.put(name, new JsonObject(json)));
        return declared;
    }

    private Future<Void> deployWorkers(HandlerRegistry handlers, TasklineConfig config, QueueSignalRoutes signals) {
        Future<Void> chain = Future.succeededFuture();
        for (TaskQueue queue : queues.all()) {
            if (queue.config().remote()) {
                continue; // run by remote workers, through RemoteWorkers
            }
            WorkerVerticle worker = new WorkerVerticle(
                    queue,
                    handlers,
                    metrics.queue(queue.name()),
                    nodeId,
                    config.worker().progressIntervalMs(),
                    attemptParts);
            workers.add(worker);
            signals.served(queue.name(), worker);
            chain = chain.compose(v -> track(vertx.deployVerticle(worker)));
        }
        return chain.compose(v -> track(vertx.deployVerticle(remote)));
    }

    private Future<Void> track(Future<String> deployment) {
        return deployment.map(id -> {
            deployments.add(id);
            return null;
        });
    }

    public int httpPort() {
        // Every instance listens on the one shared socket.
        return httpInstances.get(0).port();
    }

    /** The API's routes, as {@link HttpVerticle#routes} gives them. */
    public List<String> httpRoutes() {
        return httpInstances.get(0).routes();
    }

    /** How many HTTP verticles (each on its own event loop) serve the API. */
    public int httpInstances() {
        return httpInstances.size();
    }

    public String nodeId() {
        return nodeId;
    }

    /**
     * Every operation a caller can ask of this node, as the HTTP API asks them: for an application
     * that embeds the node, and for tests below the routes.
     */
    public Services services() {
        return services;
    }

    /**
     * Also tells {@code listener} which tasks got journal events through this node, after each write
     * committed, as this node's streams are told: so that a test waits for a transition instead of
     * reading the task again and again. It runs on whatever thread completed the write and must not
     * block.
     */
    public void onTaskEvents(Consumer<Collection<UUID>> listener) {
        journalSignals.watch(listener);
    }

    /** The node's background loops, each with the pass its timer runs, for tests to run by hand. */
    public Passes passes() {
        return passes;
    }

    /**
     * The graceful half of a shutdown: readiness goes false and new submissions get 503; running
     * tasks get {@code grace} to finish; those that do not are handed back to the journal (pending,
     * version bumped) so that a restarted or another node takes them at once, without waiting out
     * their leases. Call {@link #close} after it.
     */
    public Future<Void> shutdown(Duration grace) {
        scheduler.halt();
        admission.drain();
        LOG.info(nodeId + " draining: " + grace.toMillis() + " ms for running tasks to finish");
        List<Future<Void>> drained = new ArrayList<>();
        drained.add(remote.drain());
        for (WorkerVerticle worker : workers) {
            drained.add(worker.drain(grace));
        }
        return Future.join(drained)
                .<Void>mapEmpty()
                .onComplete(v -> LOG.info(nodeId + " drained"))
                // What was handed back is due now, and no node holds it: the others take it at once.
                .eventually(() -> {
                    queues.all().forEach(queue -> cluster.tellDue(queue.name()));
                    return Future.succeededFuture();
                });
    }

    /** {@link #shutdown(Duration)} with the configured grace period. */
    public Future<Void> shutdown() {
        return shutdown(Duration.ofMillis(config.shutdown().graceMs()));
    }

    /** Undeploys in reverse order, then closes the pools and the embedded PostgreSQL. */
    public Future<Void> close() {
        // Listed gone at once, its upkeep lease let go for another node to take at its next heartbeat.
        Future<Void> chain = cluster.leave().recover(e -> Future.succeededFuture());
        for (int i = deployments.size() - 1; i >= 0; i--) {
            String id = deployments.get(i);
            chain = chain.compose(v -> vertx.undeploy(id)).recover(e -> Future.succeededFuture());
        }
        // Each step whatever became of the one before: a pool that fails to close must not keep the
        // other, or the embedded PostgreSQL, open.
        return chain.eventually(() -> Future.join(
                        pool.close(),
                        insertPool.close(),
                        readPool == pool ? Future.succeededFuture() : readPool.close()))
                .eventually(() -> embedded == null
                        ? Future.<Void>succeededFuture()
                        : vertx.executeBlocking(
                                () -> {
                                    embedded.close();
                                    return null;
                                },
                                false))
                .mapEmpty();
    }
}
