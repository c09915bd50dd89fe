package dev.taskline.config;

import com.fasterxml.jackson.core.JsonProcessingException;
import com.fasterxml.jackson.databind.JsonNode;
import com.fasterxml.jackson.databind.ObjectMapper;
import com.fasterxml.jackson.databind.node.JsonNodeType;
import com.fasterxml.jackson.databind.node.ObjectNode;
import java.io.IOException;
import java.io.InputStream;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

/**
 * Reads {@link TasklineConfig} from a JSON file, then applies environment overrides.
 *
 * <p>Where the file comes from: {@code TASKLINE_CONFIG} if set, else {@code conf/taskline.json}
 * in the working directory, else the copy packaged in the jar. Unknown keys are errors, so that a
 * misspelt setting fails start-up instead of being silently ignored.
 */
public final class ConfigLoader {

    public static final String ENV_CONFIG = "TASKLINE_CONFIG";
    public static final String ENV_HTTP_HOST = "TASKLINE_HTTP_HOST";
    public static final String ENV_HTTP_PORT = "TASKLINE_HTTP_PORT";
    public static final String ENV_PG_URL = "TASKLINE_PG_URL";
    public static final String ENV_DATA_DIR = "TASKLINE_DATA_DIR";
    public static final String ENV_POOL_SIZE = "TASKLINE_PG_POOL_SIZE";
    public static final String ENV_HANDLERS_DIR = "TASKLINE_HANDLERS_DIR";
    public static final String ENV_PG_LISTEN_URL = "TASKLINE_PG_LISTEN_URL";
    public static final String ENV_PG_READ_URL = "TASKLINE_PG_READ_URL";
    public static final String ENV_TAKE_OVER_CONFIG = "TASKLINE_TAKE_OVER_CONFIG";
    public static final String ENV_ADDRESS = "TASKLINE_ADDRESS";

    private static final String PACKAGED = "/conf/taskline.json";
    private static final ObjectMapper JSON = new ObjectMapper();

    private ConfigLoader() {}

    /** Loads the node's configuration as a process would: file by the rules above, then {@code env}. */
    public static TasklineConfig load(Map<String, String> env) {
        String explicit = env.get(ENV_CONFIG);
        if (explicit != null && !explicit.isBlank()) {
            Path path = Path.of(explicit);
            if (!Files.isRegularFile(path)) {
                throw new ConfigException(ENV_CONFIG + " names " + explicit + ", which is not a readable file");
            }
            return fromFile(path, env);
        }
        Path local = Path.of("conf", "taskline.json");
        if (Files.isRegularFile(local)) {
            return fromFile(local, env);
        }
        try (InputStream in = ConfigLoader.class.getResourceAsStream(PACKAGED)) {
            if (in == null) {
                return fromJson("{}", env);
            }
            return fromJson(new String(in.readAllBytes(), java.nio.charset.StandardCharsets.UTF_8), env);
        } catch (IOException e) {
            throw new ConfigException("cannot read the packaged " + PACKAGED, e);
        }
    }

    public static TasklineConfig fromFile(Path path, Map<String, String> env) {
        try {
            return fromJson(Files.readString(path), env);
        } catch (IOException e) {
            throw new ConfigException("cannot read config file " + path + ": " + e.getMessage(), e);
        }
    }

    public static TasklineConfig fromJson(String json, Map<String, String> env) {
        JsonNode root;
        try {
            root = JSON.readTree(json);
        } catch (JsonProcessingException e) {
            throw new ConfigException("config is not valid JSON: " + e.getOriginalMessage(), e);
        }
        if (root == null || root.isMissingNode()) {
            root = JSON.createObjectNode();
        }
        if (!root.isObject()) {
            throw new ConfigException("config must be a JSON object at the top level, got " + root.getNodeType());
        }
        Node top = new Node("", root);
        top.only(
                "http",
                "journal",
                "queues",
                "worker",
                "recovery",
                "retention",
                "shutdown",
                "handlers",
                "auth",
                "scheduler",
                "schedules",
                "flows",
                "triggers",
                "cluster",
                "durable");

        Node http = top.object("http");
        http.only(
                "host",
                "port",
                "bodyLimitBytes",
                "maxBatchSize",
                "instances",
                "maxStreams",
                "maxWaitingClaims",
                "tenantShare",
                "trustedProxies",
                "forwardedHeader",
                "tls",
                "maxClaimBytes",
                "maxInlineBytes",
                "maxPageBytes");
        Node tls = http.object("tls");
        tls.only("certPath", "keyPath");
        TasklineConfig.Http httpConfig = new TasklineConfig.Http(
                envOr(env, ENV_HTTP_HOST, http.text("host", "127.0.0.1")),
                envInt(env, ENV_HTTP_PORT, "http.port", http.integer("port", 8080)),
                http.longValue("bodyLimitBytes", 1024 * 1024),
                http.integer("maxBatchSize", 100),
                http.integer("instances", 1),
                http.integer("maxStreams", 10_000),
                http.integer("maxWaitingClaims", 20_000),
                http.number("tenantShare", 0.25),
                TasklineConfig.Proxies.parse(
                        http.texts("trustedProxies"), http.text("forwardedHeader", "X-Forwarded-For")),
                tls.node.isEmpty()
                        ? null
                        : new TasklineConfig.Tls(path(tls.text("certPath", null)), path(tls.text("keyPath", null))),
                http.longValue("maxClaimBytes", TasklineConfig.Http.DEFAULT_MAX_CLAIM_BYTES),
                http.longValue("maxInlineBytes", TasklineConfig.Http.DEFAULT_MAX_INLINE_BYTES),
                http.longValue("maxPageBytes", TasklineConfig.Http.DEFAULT_MAX_PAGE_BYTES));

        Node journal = top.object("journal");
        journal.only(
                "pgUrl",
                "dataDir",
                "poolSize",
                "maxWaitingInserts",
                "statementTimeoutMs",
                "lockTimeoutMs",
                "readUrl",
                "readPoolSize",
                "statementsInFlight");
        TasklineConfig.Journal journalConfig = new TasklineConfig.Journal(
                envOr(env, ENV_PG_URL, journal.text("pgUrl", null)),
                Path.of(envOr(env, ENV_DATA_DIR, journal.text("dataDir", "./data"))),
                envInt(env, ENV_POOL_SIZE, "journal.poolSize", journal.integer("poolSize", 8)),
                journal.integer("maxWaitingInserts", 64),
                journal.longValue("statementTimeoutMs", 30_000),
                journal.longValue("lockTimeoutMs", 5_000),
                envOr(env, ENV_PG_READ_URL, journal.text("readUrl", null)),
                journal.integer("readPoolSize", 4),
                journal.integer(
                        "statementsInFlight",
                        TasklineConfig.Journal.defaultStatementsInFlight(
                                Runtime.getRuntime().availableProcessors())));

        Map<String, QueueConfig> queues = new LinkedHashMap<>();
        Node queuesNode = top.object("queues");
        for (Iterator<String> names = queuesNode.node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            Node q = queuesNode.object(name);
            q.only(
                    "slots",
                    "capacity",
                    "leaseMs",
                    "heartbeatMs",
                    "maxAttempts",
                    "backoffBaseMs",
                    "backoffCapMs",
                    "timeoutMs",
                    "agingPerSecond",
                    "scheduledCapacity",
                    "tenantLimit",
                    "remote",
                    "types",
                    "push",
                    "claimAhead",
                    "keyConcurrency",
                    "keyLimits",
                    "fairTenants",
                    "tenantWeights",
                    "rateLimit");
            int slots = q.integer("slots", QueueConfig.DEFAULT_SLOTS);
            long leaseMs = q.longValue("leaseMs", QueueConfig.DEFAULT_LEASE_MS);
            long backoffCapMs = q.longValue("backoffCapMs", QueueConfig.DEFAULT_BACKOFF_CAP_MS);
            queues.put(
                    name,
                    new QueueConfig(
                            name,
                            slots,
                            q.integer("capacity", QueueConfig.DEFAULT_CAPACITY),
                            leaseMs,
                            q.longValue("heartbeatMs", Math.max(10, leaseMs / 3)),
                            q.integer("maxAttempts", QueueConfig.DEFAULT_MAX_ATTEMPTS),
                            q.longValue("backoffBaseMs", Math.min(QueueConfig.DEFAULT_BACKOFF_BASE_MS, backoffCapMs)),
                            backoffCapMs,
                            q.longValue("timeoutMs", QueueConfig.DEFAULT_TIMEOUT_MS),
                            q.number("agingPerSecond", QueueConfig.DEFAULT_AGING_PER_SECOND),
                            q.integer("scheduledCapacity", QueueConfig.DEFAULT_SCHEDULED_CAPACITY),
                            q.integer("tenantLimit", 0),
                            q.bool("remote", false),
                            q.texts("types"),
                            q.node.hasNonNull("push") ? push(q.object("push")) : null,
                            q.integer("claimAhead", QueueConfig.defaultClaimAhead(slots)),
                            keyLimits(q),
                            new QueueConfig.Fairness(q.bool("fairTenants", true), q.integers("tenantWeights", 1)),
                            rateLimit(q)));
        }
        queues.putIfAbsent(TasklineConfig.DEFAULT_QUEUE, QueueConfig.defaults(TasklineConfig.DEFAULT_QUEUE));

        Node worker = top.object("worker");
        worker.only("progressIntervalMs");
        Node recovery = top.object("recovery");
        recovery.only("intervalMs", "batchSize");
        Node retention = top.object("retention");
        retention.only("finishedTaskTtlMs", "idempotencyKeyTtlMs", "partitionIntervalMs", "archive");
        Node shutdown = top.object("shutdown");
        shutdown.only("graceMs");
        Node handlers = top.object("handlers");
        handlers.only("dir");
        Node scheduler = top.object("scheduler");
        scheduler.only("graceMs", "maxCatchUp");
        Node flows = top.object("flows");
        flows.only("maxTasks", "maxBlocked", "maxParentBytes");
        Node durable = top.object("durable");
        durable.only("maxStepsPerTask", "maxStepBytes", "maxSignalsPerTask", "maxSignalBytes");
        Node cluster = top.object("cluster");
        cluster.only("heartbeatMs", "fallbackMs", "listenUrl", "takeOverConfig", "address");
        // Each definition is checked as the API checks one (its task against the queues and handlers),
        // when the node starts: here only its shape.
        Node schedules = top.object("schedules");
        Map<String, String> declared = new LinkedHashMap<>();
        for (Iterator<String> names = schedules.node.fieldNames(); names.hasNext(); ) {
            String name = names.next();
            declared.put(name, schedules.object(name).node.toString());
        }

        return new TasklineConfig(
                httpConfig,
                journalConfig,
                queues,
                new TasklineConfig.Worker(worker.longValue("progressIntervalMs", 250)),
                new TasklineConfig.Recovery(
                        recovery.longValue("intervalMs", 1000), recovery.integer("batchSize", 1000)),
                new TasklineConfig.Retention(
                        retention.longValue("finishedTaskTtlMs", 7L * 24 * 3600 * 1000),
                        retention.longValue("idempotencyKeyTtlMs", 24L * 3600 * 1000),
                        retention.longValue("partitionIntervalMs", 24L * 3600 * 1000),
                        retention.bool("archive", false)),
                new TasklineConfig.Shutdown(shutdown.longValue("graceMs", 30_000)),
                new TasklineConfig.Handlers(Path.of(envOr(env, ENV_HANDLERS_DIR, handlers.text("dir", "./handlers")))),
                auth(top.object("auth")),
                new TasklineConfig.Scheduling(
                        scheduler.longValue("graceMs", 1000), scheduler.integer("maxCatchUp", 1000), declared),
                new TasklineConfig.Flows(
                        flows.integer("maxTasks", TasklineConfig.Flows.DEFAULTS.maxTasks()),
                        flows.integer("maxBlocked", TasklineConfig.Flows.DEFAULTS.maxBlocked()),
                        flows.longValue("maxParentBytes", TasklineConfig.Flows.DEFAULTS.maxParentBytes())),
                triggers(top),
                new TasklineConfig.Cluster(
                        cluster.longValue("heartbeatMs", 2_000),
                        cluster.longValue("fallbackMs", 5_000),
                        envOr(env, ENV_PG_LISTEN_URL, cluster.text("listenUrl", null)),
                        "true".equalsIgnoreCase(env.get(ENV_TAKE_OVER_CONFIG)) || cluster.bool("takeOverConfig", false),
                        envOr(env, ENV_ADDRESS, cluster.text("address", null))),
                new TasklineConfig.Durable(
                        durable.integer("maxStepsPerTask", TasklineConfig.Durable.DEFAULTS.maxStepsPerTask()),
                        durable.longValue("maxStepBytes", TasklineConfig.Durable.DEFAULTS.maxStepBytes()),
                        durable.integer("maxSignalsPerTask", TasklineConfig.Durable.DEFAULTS.maxSignalsPerTask()),
                        durable.longValue("maxSignalBytes", TasklineConfig.Durable.DEFAULTS.maxSignalBytes())));
    }

    private static List<Trigger> triggers(Node top) {
        List<Trigger> triggers = new ArrayList<>();
        JsonNode list = top.node.get("triggers");
        if (list == null || list.isNull()) {
            return triggers;
        }
        if (!list.isArray()) {
            throw new ConfigException(
                    top.key("triggers") + " must be an array of {event, type, queue?, concurrencyKey?}");
        }
        for (int i = 0; i < list.size(); i++) {
            if (!list.get(i).isObject()) {
                throw new ConfigException(top.key("triggers") + "[" + i + "] must be an object");
            }
            Node trigger = new Node(top.key("triggers") + "[" + i + "]", list.get(i));
            trigger.only("event", "type", "queue", "concurrencyKey");
            triggers.add(new Trigger(
                    trigger.text("event", null),
                    trigger.text("type", null),
                    trigger.text("queue", null),
                    trigger.text("concurrencyKey", null)));
        }
        return triggers;
    }

    private static AuthConfig auth(Node auth) {
        auth.only("keys", "allowAnonymous", "openMetrics", "maxFailuresPerMinute");
        List<AuthConfig.Key> keys = new ArrayList<>();
        JsonNode list = auth.node.get("keys");
        if (list != null && !list.isNull()) {
            if (!list.isArray()) {
                throw new ConfigException(
                        auth.key("keys") + " must be an array of {id, hash, tenant?, scopes, queues?}");
            }
            for (int i = 0; i < list.size(); i++) {
                if (!list.get(i).isObject()) {
                    throw new ConfigException(auth.key("keys") + "[" + i + "] must be an object");
                }
                Node key = new Node(auth.key("keys") + "[" + i + "]", list.get(i));
                key.only("id", "hash", "tenant", "scopes", "queues");
                keys.add(new AuthConfig.Key(
                        key.text("id", null),
                        key.text("hash", null),
                        key.text("tenant", null),
                        Set.copyOf(key.texts("scopes")),
                        Set.copyOf(key.texts("queues"))));
            }
        }
        return new AuthConfig(
                keys,
                auth.bool("allowAnonymous", false),
                auth.bool("openMetrics", false),
                auth.integer("maxFailuresPerMinute", 20));
    }

    /** {@code keyConcurrency} (a bound for every key) and {@code keyLimits} (some keys' own). */
    private static QueueConfig.KeyLimits keyLimits(Node q) {
        if (q.node.has("keyConcurrency") && q.integer("keyConcurrency", 0) < 1) {
            throw new ConfigException(
                    q.key("keyConcurrency") + " must be from 1 to 100000, got " + q.node.get("keyConcurrency"));
        }
        return new QueueConfig.KeyLimits(q.integer("keyConcurrency", 0), q.integers("keyLimits", 0));
    }

    /** {@code rateLimit: {tasks, perMs, perKey?}}; both numbers are required, so that a typo cannot mean "no limit". */
    private static QueueConfig.RateLimit rateLimit(Node q) {
        if (!q.node.hasNonNull("rateLimit")) {
            return null;
        }
        Node rate = q.object("rateLimit");
        rate.only("tasks", "perMs", "perKey");
        for (String field : List.of("tasks", "perMs")) {
            if (!rate.node.hasNonNull(field)) {
                throw new ConfigException(rate.key(field) + " is required");
            }
        }
        return new QueueConfig.RateLimit(
                rate.integer("tasks", 0), rate.longValue("perMs", 0), rate.bool("perKey", false));
    }

    private static PushTarget push(Node push) {
        push.only("url", "timeoutMs", "headers");
        String url = push.text("url", null);
        if (url == null) {
            throw new ConfigException(push.key("url") + " is required");
        }
        Node headers = push.object("headers");
        Map<String, String> values = new LinkedHashMap<>();
        headers.node.fieldNames().forEachRemaining(name -> values.put(name, headers.text(name, "")));
        try {
            return new PushTarget(java.net.URI.create(url), push.longValue("timeoutMs", 30_000), values);
        } catch (IllegalArgumentException e) {
            throw new ConfigException(push.key("url") + " is not a URL: " + url);
        }
    }

    private static Path path(String text) {
        return text == null ? null : Path.of(text);
    }

    private static String envOr(Map<String, String> env, String key, String fallback) {
        String value = env.get(key);
        return value == null || value.isBlank() ? fallback : value.trim();
    }

    private static int envInt(Map<String, String> env, String key, String configKey, int fallback) {
        String value = env.get(key);
        if (value == null || value.isBlank()) {
            return fallback;
        }
        try {
            return Integer.parseInt(value.trim());
        } catch (NumberFormatException e) {
            throw new ConfigException(key + " (" + configKey + ") must be an integer, got '" + value + "'");
        }
    }

    /** A JSON object with its dotted path, so that every error can name the key. */
    private record Node(String path, JsonNode node) {

        String key(String field) {
            return path.isEmpty() ? field : path + "." + field;
        }

        void only(String... allowed) {
            Set<String> known = Set.of(allowed);
            node.fieldNames().forEachRemaining(field -> {
                if (!known.contains(field)) {
                    throw new ConfigException(
                            key(field) + " is not a known setting (known: " + String.join(", ", allowed) + ")");
                }
            });
        }

        Node object(String field) {
            JsonNode child = node.get(field);
            if (child == null || child.isNull()) {
                return new Node(key(field), new ObjectNode(JSON.getNodeFactory()));
            }
            if (!child.isObject()) {
                throw new ConfigException(key(field) + " must be an object");
            }
            return new Node(key(field), child);
        }

        String text(String field, String fallback) {
            JsonNode child = node.get(field);
            if (child == null || child.isNull()) {
                return fallback;
            }
            if (!child.isTextual()) {
                throw new ConfigException(key(field) + " must be a string");
            }
            return child.asText();
        }

        long longValue(String field, long fallback) {
            JsonNode child = node.get(field);
            if (child == null || child.isNull()) {
                return fallback;
            }
            if (child.getNodeType() != JsonNodeType.NUMBER || !child.canConvertToLong() || !child.isIntegralNumber()) {
                throw new ConfigException(key(field) + " must be an integer, got " + child);
            }
            return child.asLong();
        }

        double number(String field, double fallback) {
            JsonNode child = node.get(field);
            if (child == null || child.isNull()) {
                return fallback;
            }
            if (!child.isNumber()) {
                throw new ConfigException(key(field) + " must be a number, got " + child);
            }
            return child.asDouble();
        }

        boolean bool(String field, boolean fallback) {
            JsonNode child = node.get(field);
            if (child == null || child.isNull()) {
                return fallback;
            }
            if (!child.isBoolean()) {
                throw new ConfigException(key(field) + " must be true or false, got " + child);
            }
            return child.asBoolean();
        }

        List<String> texts(String field) {
            JsonNode child = node.get(field);
            if (child == null || child.isNull()) {
                return List.of();
            }
            if (!child.isArray()) {
                throw new ConfigException(key(field) + " must be an array of strings");
            }
            List<String> list = new ArrayList<>();
            for (JsonNode item : child) {
                if (!item.isTextual()) {
                    throw new ConfigException(key(field) + " must be an array of strings, got " + item);
                }
                list.add(item.asText());
            }
            return list;
        }

        /** An object of integers ({@code {"name": 2, ...}}), in its order, {@code fallback} for a null; empty when absent. */
        Map<String, Integer> integers(String field, int fallback) {
            Node object = object(field);
            Map<String, Integer> found = new LinkedHashMap<>();
            for (Iterator<String> names = object.node.fieldNames(); names.hasNext(); ) {
                String name = names.next();
                found.put(name, object.integer(name, fallback));
            }
            return found;
        }

        int integer(String field, int fallback) {
            long value = longValue(field, fallback);
            if (value < Integer.MIN_VALUE || value > Integer.MAX_VALUE) {
                throw new ConfigException(key(field) + " is out of range: " + value);
            }
            return (int) value;
        }
    }
}
