package dev.taskline.config;

import java.net.InetAddress;
import java.net.UnknownHostException;
import java.nio.file.Path;
import java.util.List;
import java.util.Map;

/** Everything a node needs to start, read once by {@link ConfigLoader}. */
public record TasklineConfig(
        Http http,
        Journal journal,
        Map<String, QueueConfig> queues,
        Worker worker,
        Recovery recovery,
        Retention retention,
        Shutdown shutdown,
        Handlers handlers,
        AuthConfig auth,
        Scheduling scheduling,
        Flows flows,
        List<Trigger> triggers,
        Cluster cluster,
        Durable durable) {

    public static final String DEFAULT_QUEUE = "default";

    public TasklineConfig {
        queues = Map.copyOf(queues);
        if (!queues.containsKey(DEFAULT_QUEUE)) {
            throw new ConfigException("queues." + DEFAULT_QUEUE + " must exist");
        }
        triggers = List.copyOf(triggers);
        for (Trigger trigger : triggers) {
            if (!queues.containsKey(trigger.queue())) {
                throw new ConfigException("the trigger of event '" + trigger.event() + "' names queue '"
                        + trigger.queue() + "', which is not configured");
            }
        }
        if (!auth.enabled() && !auth.allowAnonymous() && !loopback(http.host())) {
            throw new ConfigException("http.host " + http.host() + " is reachable from other machines and no API key is"
                    + " configured: add auth.keys (java -jar taskline.jar new-key prints one), or set auth.allowAnonymous"
                    + " to true to serve everyone on purpose");
        }
    }

    /**
     * Whether only this machine can reach {@code host}: every address it resolves to is a loopback
     * one. Resolved, not read: a name that merely looks local ({@code 127.example.net}) may point
     * anywhere, and one that does not resolve cannot be shown to be local. Blocking (a name
     * lookup), as configuration is loaded before anything serves.
     */
    static boolean loopback(String host) {
        String name = host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
        try {
            InetAddress[] addresses = InetAddress.getAllByName(name);
            for (InetAddress address : addresses) {
                if (!address.isLoopbackAddress()) {
                    return false;
                }
            }
            return addresses.length > 0;
        } catch (UnknownHostException e) {
            return false;
        }
    }

    /**
     * @param bodyLimitBytes largest request body (larger ones get 413), and so the largest JSON value
     *                       the node keeps from any door: a push target's answer is read up to it, a
     *                       local handler's result is refused past it. At most {@link
     *                       #MAX_BODY_LIMIT_BYTES}: a value read back goes through a JSON decoder
     *                       whose longest string is 20,000,000 characters, and a row it could not
     *                       read would fail every list that touches it
     * @param maxBatchSize   most tasks in one batch; more get 422
     * @param instances      HTTP verticle instances (event loops serving the API)
     * @param maxStreams     most open event streams on this node; beyond it, 503
     * @param maxWaitingClaims most claims that may wait at once on one remote queue of this node;
     *                       beyond it, 429
     * @param tenantShare    of the node's streams and of a queue's waiting claims, the part one tenant
     *                       may hold (0.25: a quarter); beyond it, 429
     * @param proxies      the proxies in front of the node, whose word on the client is taken
     * @param maxClaimBytes most bytes one claim's answer carries: a claim takes fewer tasks rather
     *                     than answer more (those left go back to the line untouched), but a task whose
     *                     own payload passes it still comes, alone
     * @param maxInlineBytes largest result (or error, or step result, or signal payload) an answer that
     *                     lists many shows inline (a flow's view, a stream's snapshot and events, a task's
     *                     steps and signals); a larger one is left out, with the link that reads it
     * @param maxPageBytes most bytes of such values one page or snapshot carries inline; past it the
     *                     page ends early (with its {@code next}), or the values are left out with links
     */
    /** The most {@code http.bodyLimitBytes} may be: 16 MiB, below the JSON decoder's longest string. */
    public static final long MAX_BODY_LIMIT_BYTES = 16L * 1024 * 1024;

    public record Http(
            String host,
            int port,
            long bodyLimitBytes,
            int maxBatchSize,
            int instances,
            int maxStreams,
            int maxWaitingClaims,
            double tenantShare,
            Proxies proxies,
            Tls tls,
            long maxClaimBytes,
            long maxInlineBytes,
            long maxPageBytes) {
        public static final long DEFAULT_MAX_CLAIM_BYTES = 8L * 1024 * 1024;
        public static final long DEFAULT_MAX_INLINE_BYTES = 64L * 1024;
        public static final long DEFAULT_MAX_PAGE_BYTES = 1024L * 1024;

        public Http {
            if (maxClaimBytes < 1024 || maxClaimBytes > 1024L * 1024 * 1024) {
                throw new ConfigException("http.maxClaimBytes must be from 1024 to 1073741824, got " + maxClaimBytes);
            }
            if (maxInlineBytes < 0 || maxInlineBytes > maxPageBytes) {
                throw new ConfigException("http.maxInlineBytes must be from 0 to http.maxPageBytes (" + maxPageBytes
                        + "), got " + maxInlineBytes);
            }
            if (maxPageBytes < 1024 || maxPageBytes > 1024L * 1024 * 1024) {
                throw new ConfigException("http.maxPageBytes must be from 1024 to 1073741824, got " + maxPageBytes);
            }
            if (maxWaitingClaims < 1 || maxWaitingClaims > 1_000_000) {
                throw new ConfigException("http.maxWaitingClaims must be from 1 to 1000000, got " + maxWaitingClaims);
            }
            if (!(tenantShare > 0 && tenantShare <= 1)) {
                throw new ConfigException("http.tenantShare must be above 0 and at most 1, got " + tenantShare);
            }
            if (maxStreams < 0 || maxStreams > 1_000_000) {
                throw new ConfigException("http.maxStreams must be from 0 to 1000000, got " + maxStreams);
            }
            if (host == null || host.isBlank()) {
                throw new ConfigException("http.host must not be empty");
            }
            if (port < 0 || port > 65_535) {
                throw new ConfigException("http.port must be from 0 to 65535, got " + port);
            }
            if (bodyLimitBytes < 1024 || bodyLimitBytes > MAX_BODY_LIMIT_BYTES) {
                throw new ConfigException(
                        "http.bodyLimitBytes must be from 1024 to " + MAX_BODY_LIMIT_BYTES + ", got " + bodyLimitBytes);
            }
            if (maxBatchSize < 1 || maxBatchSize > 10_000) {
                throw new ConfigException("http.maxBatchSize must be from 1 to 10000, got " + maxBatchSize);
            }
            if (instances < 1 || instances > 64) {
                throw new ConfigException("http.instances must be from 1 to 64, got " + instances);
            }
        }
    }

    /**
     * The proxies in front of the node. A request from one of them is taken to be from the client
     * that {@code header} names, and over TLS when the proxy says https; from any other peer the
     * forwarding headers are the client's own words. One header only: a proxy that appends to
     * {@code X-Forwarded-For} passes a client's own {@code Forwarded} through untouched, and the
     * other way round.
     *
     * @param trusted  their addresses or blocks ({@code http.trustedProxies}; none by default)
     * @param standard whether they say it in {@code Forwarded} (RFC 7239: {@code for} and
     *                 {@code proto}) rather than {@code X-Forwarded-For} and {@code X-Forwarded-Proto}
     *                 ({@code http.forwardedHeader}, {@code "X-Forwarded-For"} by default)
     */
    public record Proxies(java.util.List<Cidr> trusted, boolean standard) {
        public Proxies {
            trusted = java.util.List.copyOf(trusted);
        }

        static Proxies parse(java.util.List<String> trusted, String header) {
            boolean standard;
            if (header.equalsIgnoreCase("X-Forwarded-For")) {
                standard = false;
            } else if (header.equalsIgnoreCase("Forwarded")) {
                standard = true;
            } else {
                throw new ConfigException(
                        "http.forwardedHeader must be \"X-Forwarded-For\" or \"Forwarded\", got \"" + header + "\"");
            }
            return new Proxies(trusted.stream().map(Cidr::parse).toList(), standard);
        }
    }

    /**
     * HTTPS: the node's certificate chain and its private key, PEM files (PKCS#8 or PKCS#1 key).
     * Null on {@link Http}: plain HTTP, for a node behind a proxy that ends TLS, or on 127.0.0.1.
     */
    public record Tls(Path certPath, Path keyPath) {
        public Tls {
            for (Path file : new Path[] {certPath, keyPath}) {
                if (file == null || !java.nio.file.Files.isRegularFile(file) || !java.nio.file.Files.isReadable(file)) {
                    throw new ConfigException("http.tls." + (file == certPath ? "certPath" : "keyPath")
                            + " must name a readable" + " PEM file, got " + file);
                }
            }
        }
    }

    /**
     * @param pgUrl    {@code postgresql://user:pass@host:port/db}; null starts the embedded PostgreSQL
     * @param dataDir  where the embedded PostgreSQL keeps its data
     * @param poolSize connections to PostgreSQL, besides those that journal new tasks
     * @param maxWaitingInserts submissions that may wait for the insert in progress; beyond, new ones
     *                          get 429 at once instead of waiting for more than the next insert
     * @param statementTimeoutMs how long one of the node's statements may run before PostgreSQL cancels
     *                          it (0: no limit); the request waiting on it gets 503 and the connection is
     *                          free again. Migrations are not bounded.
     * @param lockTimeoutMs     how long one of its statements may wait for a lock another session holds
     *                          (0: no limit), with the same end
     * @param readUrl           a read replica (null: none) for the reads that may be a little behind:
     *                          lists of tasks and flows, a tenant's counts; never a task's own read,
     *                          a stream's, or a claim
     * @param readPoolSize      connections to the read replica
     * @param statementsInFlight grouped statements of one kind (inserts, claims, ends) that may be out
     *                          at once, each on a connection of its own: the inserts have that many of
     *                          their own, the others share the pool
     */
    /** How many of {@code cap} one tenant may hold at once under {@link Http#tenantShare}: at least one. */
    public static int share(int cap, double tenantShare) {
        return Math.max(1, (int) Math.floor(cap * tenantShare));
    }

    public record Journal(
            String pgUrl,
            Path dataDir,
            int poolSize,
            int maxWaitingInserts,
            long statementTimeoutMs,
            long lockTimeoutMs,
            String readUrl,
            int readPoolSize,
            int statementsInFlight) {
        public Journal {
            if (pgUrl != null && pgUrl.isBlank()) {
                pgUrl = null;
            }
            if (pgUrl != null && !pgUrl.startsWith("postgresql://") && !pgUrl.startsWith("postgres://")) {
                throw new ConfigException(
                        "journal.pgUrl (TASKLINE_PG_URL) must look like postgresql://user:pass@host:port/db");
            }
            if (dataDir == null) {
                throw new ConfigException("journal.dataDir must be set");
            }
            if (poolSize < 1 || poolSize > 200) {
                throw new ConfigException("journal.poolSize must be from 1 to 200, got " + poolSize);
            }
            if (maxWaitingInserts < 1) {
                throw new ConfigException("journal.maxWaitingInserts must be at least 1, got " + maxWaitingInserts);
            }
            // Below these, the node's own grouped statements would be cancelled under any load.
            if (statementTimeoutMs != 0 && (statementTimeoutMs < 100 || statementTimeoutMs > 3_600_000)) {
                throw new ConfigException("journal.statementTimeoutMs must be 0 (none) or from 100 to 3600000, got "
                        + statementTimeoutMs);
            }
            if (lockTimeoutMs != 0 && (lockTimeoutMs < 10 || lockTimeoutMs > 3_600_000)) {
                throw new ConfigException(
                        "journal.lockTimeoutMs must be 0 (none) or from 10 to 3600000, got " + lockTimeoutMs);
            }
            if (readUrl != null && readUrl.isBlank()) {
                readUrl = null;
            }
            if (readUrl != null && !readUrl.startsWith("postgresql://") && !readUrl.startsWith("postgres://")) {
                throw new ConfigException(
                        "journal.readUrl (TASKLINE_PG_READ_URL) must look like postgresql://user:pass@host:port/db");
            }
            if (readUrl != null && pgUrl == null) {
                throw new ConfigException("journal.readUrl (TASKLINE_PG_READ_URL) needs journal.pgUrl: the embedded"
                        + " PostgreSQL has no replica");
            }
            if (readPoolSize < 1 || readPoolSize > 200) {
                throw new ConfigException("journal.readPoolSize must be from 1 to 200, got " + readPoolSize);
            }
            if (statementsInFlight < 1 || statementsInFlight > 32) {
                throw new ConfigException("journal.statementsInFlight must be from 1 to 32, got " + statementsInFlight);
            }
        }

        /**
         * {@code statementsInFlight} unless configured, on a machine of {@code cores}: one statement of
         * a kind at a time up to 7 cores, then one more for each 4, at most 4. Measured on two cores,
         * several out at once cut a drain into more, smaller statements and commits on cores already
         * busy (0.84x in the peers' harness); where the database has cores to spare, one statement of
         * a kind at a time kept it to one of them (about 30,000 ends a second on 16).
         */
        public static int defaultStatementsInFlight(int cores) {
            return Math.max(1, Math.min(4, cores / 4));
        }

        /**
         * The most connections a node holds on its journal: its pool, its inserts' connections and its
         * listening connection; what it takes of PostgreSQL's max_connections.
         */
        public int connections() {
            return poolSize + statementsInFlight + 1;
        }
    }

    /**
     * How the node acts with the others on its journal.
     *
     * @param heartbeatMs    how often it heart-beats in the registry (its row lives three of them) and
     *                       renews the upkeep lease
     * @param fallbackMs     how often the polls that notifications make urgent (switches, keys, streams'
     *                       catch-up) still run while the listening connection is up
     * @param listenUrl      where the listening connection goes (null: the journal's URL); it must reach
     *                       PostgreSQL itself, as LISTEN belongs to a session (a node that finds a pooler
     *                       there, whatever its mode, polls instead)
     * @param takeOverConfig start even when live nodes define a shared queue otherwise (a rolling change)
     * @param address        the API's address as other nodes and operators should see it (null: the
     *                       listening host and port)
     */
    public record Cluster(long heartbeatMs, long fallbackMs, String listenUrl, boolean takeOverConfig, String address) {
        public Cluster {
            if (heartbeatMs < 50 || heartbeatMs > 60_000) {
                throw new ConfigException("cluster.heartbeatMs must be from 50 to 60000, got " + heartbeatMs);
            }
            if (fallbackMs < 10) {
                throw new ConfigException("cluster.fallbackMs must be at least 10, got " + fallbackMs);
            }
            if (listenUrl != null && listenUrl.isBlank()) {
                listenUrl = null;
            }
            if (listenUrl != null && !listenUrl.startsWith("postgresql://") && !listenUrl.startsWith("postgres://")) {
                throw new ConfigException(
                        "cluster.listenUrl (TASKLINE_PG_LISTEN_URL) must look like postgresql://user:pass@host:port/db");
            }
            if (address != null && address.isBlank()) {
                address = null;
            }
        }
    }

    /** @param progressIntervalMs least time between two progress writes of one task to the journal */
    public record Worker(long progressIntervalMs) {
        public Worker {
            if (progressIntervalMs < 0) {
                throw new ConfigException("worker.progressIntervalMs must not be negative, got " + progressIntervalMs);
            }
        }
    }

    /**
     * @param intervalMs how often the sweeper looks for expired leases; the journal's backlog is
     *                   counted (and waiting work paged in) every fifth pass, and when a queue that
     *                   drained to half asks for more (at most once a second)
     * @param batchSize  most rows one sweep or page-in touches
     */
    public record Recovery(long intervalMs, int batchSize) {
        public Recovery {
            if (intervalMs < 10) {
                throw new ConfigException("recovery.intervalMs must be at least 10, got " + intervalMs);
            }
            if (batchSize < 1 || batchSize > 100_000) {
                throw new ConfigException("recovery.batchSize must be from 1 to 100000, got " + batchSize);
            }
        }
    }

    /**
     * @param finishedTaskTtlMs   finished tasks older than this go with their history: their unit's
     *                            tables are dropped once everything in it ended this long ago
     * @param idempotencyKeyTtlMs how long an Idempotency-Key answers with its first response
     * @param partitionIntervalMs the time a unit of the journal covers: finished tasks created within
     *                            one share its tables (migration 000030), made ahead and dropped whole
     * @param archive             detach a unit's tables past retention and keep them (renamed
     *                            archived_*), for the operator to copy and drop, instead of dropping them
     */
    public record Retention(
            long finishedTaskTtlMs, long idempotencyKeyTtlMs, long partitionIntervalMs, boolean archive) {
        /** Units made ahead of the clock, so that a task's end finds its unit's tables already there. */
        public static final int UNITS_AHEAD = 3;

        public Retention {
            // At least a minute (tests use minutes); at most thirty days, so that a unit past
            // retention goes within a month of it.
            if (partitionIntervalMs < 60_000 || partitionIntervalMs > 30L * 24 * 3600 * 1000) {
                throw new ConfigException(
                        "retention.partitionIntervalMs must be from 60000 to 2592000000, got " + partitionIntervalMs);
            }
            // Every read that may meet a finished task plans each unit's tables; a few hundred of them
            // at most keeps that cheap.
            if (finishedTaskTtlMs / partitionIntervalMs > 400) {
                throw new ConfigException("retention.finishedTaskTtlMs / retention.partitionIntervalMs must be at"
                        + " most 400 (units kept at once), got " + finishedTaskTtlMs / partitionIntervalMs
                        + ": make retention.partitionIntervalMs longer");
            }
            if (finishedTaskTtlMs < 60_000) {
                throw new ConfigException(
                        "retention.finishedTaskTtlMs must be at least 60000, got " + finishedTaskTtlMs);
            }
            if (idempotencyKeyTtlMs < 60_000) {
                throw new ConfigException(
                        "retention.idempotencyKeyTtlMs must be at least 60000, got " + idempotencyKeyTtlMs);
            }
        }
    }

    /** @param graceMs how long running tasks may finish after SIGTERM before they are handed back */
    public record Shutdown(long graceMs) {
        public Shutdown {
            if (graceMs < 0 || graceMs > 3_600_000) {
                throw new ConfigException("shutdown.graceMs must be from 0 to 3600000, got " + graceMs);
            }
        }
    }

    /**
     * @param dir where the node looks for handler jars at start ({@code *.jar}, loaded with their
     *            {@code META-INF/services} entries); a directory that does not exist holds none
     */
    /**
     * @param graceMs    how late a tick may be, when a node takes a schedule up (at its start, or
     *                   after its passes stalled), and still fire as due rather than follow the
     *                   schedule's catchUp
     * @param maxCatchUp most missed ticks of a schedule that {@code catchUp: all} fires (the newest)
     * @param declared   schedules the config declares: name to definition, as JSON text
     */
    public record Scheduling(long graceMs, int maxCatchUp, Map<String, String> declared) {
        public Scheduling {
            if (graceMs < 0 || graceMs > 24L * 3600 * 1000) {
                throw new ConfigException("scheduler.graceMs must be from 0 to 86400000, got " + graceMs);
            }
            if (maxCatchUp < 1 || maxCatchUp > 100_000) {
                throw new ConfigException("scheduler.maxCatchUp must be from 1 to 100000, got " + maxCatchUp);
            }
            declared = Map.copyOf(declared);
        }
    }

    /**
     * @param maxTasks       most tasks in one flow; more get 422
     * @param maxBlocked     most tasks waiting blocked in the whole journal; a flow past it gets 429
     * @param maxParentBytes most bytes of parents' results and errors handed to one task inline (in
     *                       its claim's answer, or read whole for a handler of this node); past it the
     *                       task is given a reference and reads them in pages
     */
    public record Flows(int maxTasks, int maxBlocked, long maxParentBytes) {
        public static final Flows DEFAULTS = new Flows(10_000, 1_000_000, 1024L * 1024);

        public Flows {
            if (maxTasks < 1 || maxTasks > 100_000) {
                throw new ConfigException("flows.maxTasks must be from 1 to 100000, got " + maxTasks);
            }
            if (maxBlocked < 0) {
                throw new ConfigException("flows.maxBlocked must be at least 0, got " + maxBlocked);
            }
            if (maxParentBytes < 1 || maxParentBytes > 1024L * 1024 * 1024) {
                throw new ConfigException("flows.maxParentBytes must be from 1 to 1073741824, got " + maxParentBytes);
            }
        }
    }

    /**
     * Bounds on what one durable task keeps: steps and signals are refused (422) past them; a step
     * of a handler of this node fails its attempt, saying which bound it passed.
     *
     * @param maxStepsPerTask   most steps (done or waiting) one task may have
     * @param maxStepBytes      most bytes of one step's result, as JSON text
     * @param maxSignalsPerTask most signals one task may be sent, over its life
     * @param maxSignalBytes    most bytes of one signal's payload, as JSON text
     */
    public record Durable(int maxStepsPerTask, long maxStepBytes, int maxSignalsPerTask, long maxSignalBytes) {
        public static final Durable DEFAULTS = new Durable(1_000, 1024L * 1024, 1_000, 256L * 1024);

        public Durable {
            if (maxStepsPerTask < 1 || maxStepsPerTask > 1_000_000) {
                throw new ConfigException("durable.maxStepsPerTask must be from 1 to 1000000, got " + maxStepsPerTask);
            }
            if (maxSignalsPerTask < 1 || maxSignalsPerTask > 1_000_000) {
                throw new ConfigException(
                        "durable.maxSignalsPerTask must be from 1 to 1000000, got " + maxSignalsPerTask);
            }
            if (maxStepBytes < 16 || maxStepBytes > 1024L * 1024 * 1024) {
                throw new ConfigException("durable.maxStepBytes must be from 16 to 1073741824, got " + maxStepBytes);
            }
            if (maxSignalBytes < 16 || maxSignalBytes > 1024L * 1024 * 1024) {
                throw new ConfigException(
                        "durable.maxSignalBytes must be from 16 to 1073741824, got " + maxSignalBytes);
            }
        }
    }

    public record Handlers(Path dir) {
        public Handlers {
            if (dir == null) {
                throw new ConfigException("handlers.dir must be a path");
            }
        }
    }

    public QueueConfig queue(String name) {
        return queues.get(name);
    }
}
