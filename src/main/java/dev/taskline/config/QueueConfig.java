package dev.taskline.config;

import java.util.List;
import java.util.Map;
import java.util.regex.Pattern;

/**
 * One named queue on this node.
 *
 * @param slots             tasks of this queue that may run at once on this node
 * @param capacity          most tasks that may wait in memory; beyond it submissions get 429
 * @param leaseMs           how long a claim holds without a heartbeat before another worker may take over
 * @param heartbeatMs       how often a running task renews its lease; at most half of leaseMs
 * @param maxAttempts       attempts a task gets unless it says otherwise
 * @param backoffBaseMs     retry delay before the second attempt, doubling after each failure ...
 * @param backoffCapMs      ... up to this; the actual delay is drawn uniformly below it (full jitter)
 * @param timeoutMs         how long one attempt may run unless the task says otherwise
 * @param agingPerSecond    priority points a waiting task gains per second, so low priorities cannot starve
 * @param scheduledCapacity most delayed tasks (and retries waiting out their backoff) held in memory
 * @param tenantLimit       most unfinished tasks (waiting, scheduled, running, blocked in a flow) that one tenant
 *                          may have in this queue on this node, so that one tenant cannot take the whole
 *                          capacity; 0: no limit
 * @param claimAhead        most tasks a local worker holds leased beyond its free slots, so that a slot that
 *                          frees starts its next task without waiting for a claim; the worker holds fewer when
 *                          its handlers are slow (see {@code WorkerVerticle}); 0: none
 * @param keyLimits         how many tasks of one concurrency key may run at once, across every node
 * @param fairness          whether tenants take turns at the queue's slots, and with what weights
 * @param rateLimit         how many tasks may start per window, across every node; null: no limit
 */
public record QueueConfig(
        String name,
        int slots,
        int capacity,
        long leaseMs,
        long heartbeatMs,
        int maxAttempts,
        long backoffBaseMs,
        long backoffCapMs,
        long timeoutMs,
        double agingPerSecond,
        int scheduledCapacity,
        int tenantLimit,
        boolean remote,
        List<String> types,
        PushTarget push,
        int claimAhead,
        KeyLimits keyLimits,
        Fairness fairness,
        RateLimit rateLimit) {

    /**
     * At most {@code tasks} starts in any {@code perMs} milliseconds, counted across every node; with
     * {@code perKey}, that many for each concurrency key, and as many again for the tasks without one.
     */
    public record RateLimit(int tasks, long perMs, boolean perKey) {

        /** The shortest window: below it the claims' own round trips are the window, and the count means little. */
        public static final long LEAST_PER_MS = 10;

        public static final int MOST_TASKS = 1_000_000;
        public static final long MOST_PER_MS = 24L * 3600 * 1000;

        /** Starts per second that the limit allows at most, on average. */
        public double perSecond() {
            return tasks * 1000.0 / perMs;
        }
    }

    /**
     * Tenants take turns ({@code tenants}), each starting as many of its tasks in its turn as its
     * weight (1 unless {@code weights} says; tasks without a tenant take turns as one more, of weight
     * 1); off, the queue's order alone decides, whoever submitted.
     */
    public record Fairness(boolean tenants, Map<String, Integer> weights) {

        public static final Fairness TENANTS = new Fairness(true, Map.of());

        public Fairness {
            weights = Map.copyOf(weights);
        }

        public int weight(String tenant) {
            return weights.getOrDefault(tenant, 1);
        }
    }

    /** The longest concurrency key a task may carry. */
    public static final int MAX_KEY_LENGTH = 128;

    /**
     * Keyed concurrency: at most {@code perKey} tasks of one key run at once (0: no bound unless the
     * key has its own), and {@code overrides} sets some keys' bounds apart.
     */
    public record KeyLimits(int perKey, Map<String, Integer> overrides) {

        public static final KeyLimits NONE = new KeyLimits(0, Map.of());

        public KeyLimits {
            overrides = Map.copyOf(overrides);
        }

        /** How many tasks of {@code key} may run at once; 0 when nothing bounds them (or there is no key). */
        public int limit(String key) {
            if (key == null) {
                return 0;
            }
            Integer own = overrides.get(key);
            return own != null ? own : perKey;
        }

        public boolean any() {
            return perKey > 0 || !overrides.isEmpty();
        }
    }

    /** What a task type of a remote or push queue may be called: any name a worker in any language can match. */
    public static final Pattern EXTERNAL_TYPE = Pattern.compile("[A-Za-z0-9._:-]{1,128}");

    public static final int DEFAULT_SLOTS = 4;
    public static final int DEFAULT_CAPACITY = 10_000;
    public static final long DEFAULT_LEASE_MS = 30_000;
    public static final int DEFAULT_MAX_ATTEMPTS = 3;
    public static final long DEFAULT_BACKOFF_BASE_MS = 1_000;
    public static final long DEFAULT_BACKOFF_CAP_MS = 300_000;
    public static final long DEFAULT_TIMEOUT_MS = 900_000;
    public static final double DEFAULT_AGING_PER_SECOND = 0.1;
    public static final int DEFAULT_SCHEDULED_CAPACITY = 10_000;
    /** Claims ahead per slot unless configured: enough to cover a claim's commit at no-op pace ... */
    public static final int DEFAULT_CLAIM_AHEAD_PER_SLOT = 4;
    /**
     * ... and never fewer than this, so that a few slots of short tasks still fill a commit. The
     * 50 ms horizon decides how many of these a worker holds (none for slow handlers); this only
     * bounds it. At 100, ten slots of no-op tasks drained 14,000-18,350 tasks/s, at 1,000
     * 22,281-24,468 (three runs each, one node): claims of a few dozen tasks each could not keep up.
     */
    public static final int DEFAULT_CLAIM_AHEAD_LEAST = 1_000;

    /** The claims ahead a queue of {@code slots} gets unless configured. */
    public static int defaultClaimAhead(int slots) {
        return (int)
                Math.min(100_000L, Math.max(DEFAULT_CLAIM_AHEAD_LEAST, (long) slots * DEFAULT_CLAIM_AHEAD_PER_SLOT));
    }

    public QueueConfig {
        String key = "queues." + name;
        if (name == null || !name.matches("[a-zA-Z0-9_.-]{1,64}")) {
            throw new ConfigException(
                    "queues: queue name '" + name + "' must be 1-64 letters, digits, '_', '.' or '-'");
        }
        if (slots < 1 || slots > 10_000) {
            throw new ConfigException(key + ".slots must be from 1 to 10000, got " + slots);
        }
        if (capacity < 1 || capacity > 10_000_000) {
            throw new ConfigException(key + ".capacity must be from 1 to 10000000, got " + capacity);
        }
        if (leaseMs < 100) {
            throw new ConfigException(key + ".leaseMs must be at least 100, got " + leaseMs);
        }
        // A heartbeat that is not comfortably inside the lease lets a healthy worker lose its task.
        if (heartbeatMs < 10 || heartbeatMs > leaseMs / 2) {
            throw new ConfigException(key + ".heartbeatMs must be at least 10 and at most half of leaseMs (" + leaseMs
                    + "), got " + heartbeatMs);
        }
        if (maxAttempts < 1 || maxAttempts > 100) {
            throw new ConfigException(key + ".maxAttempts must be from 1 to 100, got " + maxAttempts);
        }
        if (backoffBaseMs < 0 || backoffBaseMs > backoffCapMs) {
            throw new ConfigException(
                    key + ".backoffBaseMs must be from 0 to backoffCapMs (" + backoffCapMs + "), got " + backoffBaseMs);
        }
        if (backoffCapMs > 7L * 24 * 3600 * 1000) {
            throw new ConfigException(key + ".backoffCapMs must be at most 7 days, got " + backoffCapMs);
        }
        if (timeoutMs < 1 || timeoutMs > 24L * 3600 * 1000) {
            throw new ConfigException(key + ".timeoutMs must be from 1 to 86400000, got " + timeoutMs);
        }
        if (!(agingPerSecond >= 0) || agingPerSecond > 1_000) {
            throw new ConfigException(key + ".agingPerSecond must be from 0 to 1000, got " + agingPerSecond);
        }
        if (scheduledCapacity < 0 || scheduledCapacity > 10_000_000) {
            throw new ConfigException(key + ".scheduledCapacity must be from 0 to 10000000, got " + scheduledCapacity);
        }
        if (tenantLimit < 0 || tenantLimit > 10_000_000) {
            throw new ConfigException(key + ".tenantLimit must be from 0 (no limit) to 10000000, got " + tenantLimit);
        }
        if (claimAhead < 0 || claimAhead > 100_000) {
            throw new ConfigException(key + ".claimAhead must be from 0 to 100000, got " + claimAhead);
        }
        keyLimits = keyLimits == null ? KeyLimits.NONE : keyLimits;
        fairness = fairness == null ? Fairness.TENANTS : fairness;
        for (Map.Entry<String, Integer> w : fairness.weights().entrySet()) {
            if (w.getValue() < 1 || w.getValue() > 1_000) {
                throw new ConfigException(
                        key + ".tenantWeights." + w.getKey() + " must be from 1 to 1000, got " + w.getValue());
            }
        }
        if (keyLimits.perKey() < 0 || keyLimits.perKey() > 100_000) {
            throw new ConfigException(key + ".keyConcurrency must be from 1 to 100000, got " + keyLimits.perKey());
        }
        for (Map.Entry<String, Integer> limit : keyLimits.overrides().entrySet()) {
            if (limit.getKey().isEmpty() || limit.getKey().length() > MAX_KEY_LENGTH) {
                throw new ConfigException(key + ".keyLimits: a key must be 1-" + MAX_KEY_LENGTH + " characters, got '"
                        + limit.getKey() + "'");
            }
            if (limit.getValue() < 1 || limit.getValue() > 100_000) {
                throw new ConfigException(
                        key + ".keyLimits." + limit.getKey() + " must be from 1 to 100000, got " + limit.getValue());
            }
        }
        if (rateLimit != null && (rateLimit.tasks() < 1 || rateLimit.tasks() > RateLimit.MOST_TASKS)) {
            throw new ConfigException(
                    key + ".rateLimit.tasks must be from 1 to " + RateLimit.MOST_TASKS + ", got " + rateLimit.tasks());
        }
        if (rateLimit != null
                && (rateLimit.perMs() < RateLimit.LEAST_PER_MS || rateLimit.perMs() > RateLimit.MOST_PER_MS)) {
            throw new ConfigException(key + ".rateLimit.perMs must be from " + RateLimit.LEAST_PER_MS + " to "
                    + RateLimit.MOST_PER_MS + " (a day), got " + rateLimit.perMs());
        }
        types = types == null ? List.of() : List.copyOf(types);
        if (!types.isEmpty() && !remote && push == null) {
            throw new ConfigException(
                    key + ".types is for remote and push queues; the types of a local one are its handlers'");
        }
        if (remote && push != null) {
            throw new ConfigException(key + ": a queue is run by remote workers or by a push target, not both");
        }
        for (String type : types) {
            if (!EXTERNAL_TYPE.matcher(type).matches()) {
                throw new ConfigException(
                        key + ".types: '" + type + "' must be 1-128 letters, digits, '.', '_', ':' or '-'");
            }
        }
    }

    /** A queue run by this node's own handlers. */
    public QueueConfig(
            String name,
            int slots,
            int capacity,
            long leaseMs,
            long heartbeatMs,
            int maxAttempts,
            long backoffBaseMs,
            long backoffCapMs,
            long timeoutMs,
            double agingPerSecond,
            int scheduledCapacity,
            int tenantLimit) {
        this(
                name,
                slots,
                capacity,
                leaseMs,
                heartbeatMs,
                maxAttempts,
                backoffBaseMs,
                backoffCapMs,
                timeoutMs,
                agingPerSecond,
                scheduledCapacity,
                tenantLimit,
                false,
                List.of(),
                null,
                defaultClaimAhead(slots),
                KeyLimits.NONE,
                Fairness.TENANTS,
                null);
    }

    /** Whether this queue's tasks are run by something other than this node's handlers. */
    public boolean external() {
        return remote || push != null;
    }

    /** Whether a task of {@code type} may be submitted to this remote or push queue. */
    public boolean acceptsExternalType(String type) {
        return type != null && EXTERNAL_TYPE.matcher(type).matches() && (types.isEmpty() || types.contains(type));
    }

    /** A queue with the task-semantics defaults. */
    public QueueConfig(String name, int slots, int capacity, long leaseMs, long heartbeatMs) {
        this(
                name,
                slots,
                capacity,
                leaseMs,
                heartbeatMs,
                DEFAULT_MAX_ATTEMPTS,
                DEFAULT_BACKOFF_BASE_MS,
                DEFAULT_BACKOFF_CAP_MS,
                DEFAULT_TIMEOUT_MS,
                DEFAULT_AGING_PER_SECOND,
                DEFAULT_SCHEDULED_CAPACITY,
                0);
    }

    public static QueueConfig defaults(String name) {
        return new QueueConfig(name, DEFAULT_SLOTS, DEFAULT_CAPACITY, DEFAULT_LEASE_MS, DEFAULT_LEASE_MS / 3);
    }
}
