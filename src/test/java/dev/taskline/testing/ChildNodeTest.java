package dev.taskline.testing;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.locks.LockSupport;
import java.util.function.Predicate;
import java.util.stream.Collectors;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.io.TempDir;

/**
 * What the tests that run Taskline as child JVMs share: a data directory and a config of their
 * own, starting children on them, polling task states over HTTP, and cleaning up only what they
 * started (the children, then any PostgreSQL left on this test's own data directory).
 */
public abstract class ChildNodeTest {

    protected static final Duration START_WAIT = Duration.ofSeconds(120);
    protected static final Set<String> TERMINAL = Set.of("succeeded", "failed", "cancelled");

    @TempDir
    protected Path tmp;

    protected final List<ChildNode> children = new ArrayList<>();
    private String classPath;

    @AfterEach
    void cleanUp() {
        for (ChildNode child : children) {
            child.close();
        }
        List<ProcessHandle> leftovers = processesOnDataDir();
        for (ProcessHandle p : leftovers) {
            System.err.println("cleanup: stopping leftover " + describe(p));
            p.destroy();
        }
        for (ProcessHandle p : leftovers) {
            try {
                p.onExit().get(15, TimeUnit.SECONDS);
            } catch (Exception e) {
                p.destroyForcibly();
            }
        }
    }

    /**
     * Writes {@code config} and returns the environment of a child node on this test's data
     * directory, with the embedded PostgreSQL (any TASKLINE_PG_URL is removed) and a free port.
     */
    protected Map<String, String> childEnv(String config) throws IOException {
        Path dataDir = Files.createDirectories(dataDir());
        Path configFile = tmp.resolve("taskline.json");
        Files.writeString(configFile, config, StandardCharsets.UTF_8);
        Map<String, String> env = new HashMap<>();
        env.put("TASKLINE_HTTP_PORT", "0");
        env.put("TASKLINE_HTTP_HOST", "127.0.0.1");
        env.put("TASKLINE_DATA_DIR", dataDir.toString());
        env.put("TASKLINE_CONFIG", configFile.toString());
        env.put("TASKLINE_PG_URL", null); // removed: the node must start its embedded PostgreSQL
        classPath = ChildNode.snapshotClassPath(Files.createDirectories(tmp.resolve("classpath")));
        return env;
    }

    protected Path dataDir() {
        return tmp.resolve("data");
    }

    protected ChildNode startChild(String name, Map<String, String> env) throws IOException {
        ChildNode child = launchChild(name, env);
        child.awaitListening(START_WAIT);
        return child;
    }

    /** Starts a child without waiting for it to listen (one that may refuse to start). */
    protected ChildNode launchChild(String name, Map<String, String> env) throws IOException {
        ChildNode child = ChildNode.start(name, tmp, env, classPath);
        children.add(child);
        return child;
    }

    /**
     * Polls GET /api/tasks until {@code done} holds for our tasks' states (our rows of the last answer
     * are left in {@code rows}); fails with the last answer.
     */
    protected static Map<String, String> pollStates(
            ChildNode node,
            List<String> ids,
            Duration wait,
            Map<String, JsonObject> rows,
            Predicate<Map<String, String>> done,
            String what) {
        long deadline = System.nanoTime() + wait.toNanos();
        Set<String> ours = Set.copyOf(ids);
        Map<String, String> states = Map.of();
        while (true) {
            JsonArray page = node.getJson("/api/tasks?limit=1000").getJsonArray("tasks");
            rows.clear();
            for (int i = 0; i < page.size(); i++) {
                JsonObject row = page.getJsonObject(i);
                if (ours.contains(row.getString("id"))) {
                    rows.put(row.getString("id"), row);
                }
            }
            states = new LinkedHashMap<>();
            for (String id : ids) {
                JsonObject row = rows.get(id);
                states.put(id, row == null ? "<missing>" : row.getString("state"));
            }
            if (done.test(states)) {
                return states;
            }
            if (System.nanoTime() > deadline) {
                throw new AssertionError("not reached within " + wait + ": " + what + "; last states "
                        + histogram(states) + " " + states + "\n--- " + node.name + " log ---\n" + node.log());
            }
            pause(25);
        }
    }

    protected static List<JsonObject> events(JsonObject task) {
        JsonArray history = task.getJsonArray("history", new JsonArray());
        List<JsonObject> list = new ArrayList<>(history.size());
        for (int i = 0; i < history.size(); i++) {
            list.add(history.getJsonObject(i));
        }
        return list;
    }

    /** Whatever happened to its nodes, a task began 'submitted' and ended succeeded, exactly once. */
    protected static void checkSucceededOnce(JsonObject task, List<JsonObject> history, List<String> problems) {
        if (!"succeeded".equals(task.getString("state"))) {
            problems.add("state is " + task.getString("state") + ", not succeeded");
        }
        long succeeded = history.stream()
                .filter(e -> "succeeded".equals(e.getString("reason")))
                .count();
        if (succeeded != 1) {
            problems.add(succeeded + " 'succeeded' events, expected exactly 1");
        }
        List<JsonObject> terminal = history.stream()
                .filter(e -> TERMINAL.contains(e.getString("to")))
                .toList();
        if (terminal.size() != 1) {
            problems.add(terminal.size() + " events into a terminal state, expected exactly 1");
        }
        if (history.isEmpty() || !"submitted".equals(history.get(0).getString("reason"))) {
            problems.add("history does not start with 'submitted'");
        }
    }

    /** Checks the event that handed a claim's lease back, right after the claim at {@code i}. */
    protected interface HandBack {
        void check(int i, JsonObject claim, String worker, Long version, JsonObject next);
    }

    /**
     * Walks a task's leases: event ids grow; lease versions never go back and grow at each new lease
     * (a claim, or the hand-back named {@code handBack}); every claim is by node1 or node2 and is
     * followed by its own lease's one 'succeeded' (the last event) or by {@code handBack}, which
     * {@code onHandBack} checks.
     */
    protected static void checkLeases(
            List<JsonObject> history,
            String node1,
            String node2,
            String handBack,
            HandBack onHandBack,
            List<String> problems) {
        long lastEventId = Long.MIN_VALUE;
        long maxVersion = -1;
        for (int i = 0; i < history.size(); i++) {
            JsonObject e = history.get(i);
            long eventId = e.getLong("eventId");
            if (eventId <= lastEventId) {
                problems.add("event ids not increasing at #" + i);
            }
            lastEventId = eventId;
            Long version = e.getLong("leaseVersion");
            String reason = e.getString("reason");
            if (version != null) {
                boolean newLease = "claimed".equals(reason) || handBack.equals(reason);
                if (newLease ? version <= maxVersion : version < maxVersion) {
                    problems.add("lease version " + version + " of '" + reason + "' at #" + i + " after version "
                            + maxVersion);
                }
                maxVersion = Math.max(maxVersion, version);
            }
            if (!"claimed".equals(reason)) {
                continue;
            }
            String worker = e.getString("workerId", "");
            if (!worker.startsWith(node1) && !worker.startsWith(node2)) {
                problems.add("claimed by unknown worker " + worker);
            }
            JsonObject next = i + 1 < history.size() ? history.get(i + 1) : null;
            if (next == null) {
                problems.add("claim at #" + i + " (v" + version + ") is the last event: never finished");
            } else if ("succeeded".equals(next.getString("reason"))) {
                if (!worker.equals(next.getString("workerId")) || !version.equals(next.getLong("leaseVersion"))) {
                    problems.add("succeeded event at #" + (i + 1) + " is not by the claim's lease (" + worker + " v"
                            + version + ")");
                }
                if (i + 2 != history.size()) {
                    problems.add("events after 'succeeded': " + history.subList(i + 2, history.size()));
                }
            } else if (handBack.equals(next.getString("reason"))) {
                onHandBack.check(i, e, worker, version, next);
            } else {
                problems.add("claim at #" + i + " is followed by '" + next.getString("reason") + "'");
            }
        }
    }

    protected static Map<String, Long> histogram(Map<String, String> states) {
        return states.values().stream().collect(Collectors.groupingBy(s -> s, TreeMap::new, Collectors.counting()));
    }

    /** Live processes whose command line mentions this test's data directory (the child JVMs' does not). */
    protected List<ProcessHandle> processesOnDataDir() {
        String marker = dataDir().toAbsolutePath().normalize().toString();
        long self = ProcessHandle.current().pid();
        return ProcessHandle.allProcesses()
                .filter(p -> p.pid() != self && p.isAlive())
                .filter(p -> p.info().commandLine().map(c -> c.contains(marker)).orElse(false))
                .toList();
    }

    protected static String describe(ProcessHandle p) {
        return p.pid() + " " + p.info().commandLine().orElse("?");
    }

    /** A short pause in a polling loop with a deadline. */
    protected static void pause(long ms) {
        LockSupport.parkNanos(TimeUnit.MILLISECONDS.toNanos(ms));
    }

    protected static long elapsedMs(long startNanos) {
        return TimeUnit.NANOSECONDS.toMillis(System.nanoTime() - startNanos);
    }

    /** A small pool on the children's journal, for a test to look at and lock rows behind their back. */
    protected static io.vertx.sqlclient.Pool journalPool(io.vertx.core.Vertx vertx, String db) {
        return io.vertx.pgclient.PgBuilder.pool()
                .with(new io.vertx.sqlclient.PoolOptions().setMaxSize(2))
                .connectingTo(dev.taskline.journal.PgUrl.parse(db))
                .using(vertx)
                .build();
    }

    /** The backend of a node's end statement (a finish), once it waits for a row lock the test holds. */
    protected static int waitForBlockedEnd(io.vertx.sqlclient.Pool pool) throws Exception {
        long deadline = System.nanoTime() + TimeUnit.SECONDS.toNanos(60);
        while (System.nanoTime() < deadline) {
            var rows = TestNode.await(pool.query("SELECT pid FROM pg_stat_activity WHERE datname = current_database()"
                            + " AND wait_event_type = 'Lock' AND query LIKE '%cancel_wins%'")
                    .execute());
            if (rows.size() > 0) {
                return rows.iterator().next().getInteger("pid");
            }
            pause(20);
        }
        throw new AssertionError("the node's end statement never waited for the row lock");
    }
}
