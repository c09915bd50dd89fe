package dev.taskline.testing;

import dev.taskline.Taskline;
import dev.taskline.config.ConfigLoader;
import dev.taskline.config.TasklineConfig;
import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalSignals;
import dev.taskline.journal.PgUrl;
import dev.taskline.model.Settled;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.time.Clock;
import java.time.Duration;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Objects;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Function;
import java.util.function.Predicate;

/**
 * A Taskline node started in-process for a test, with its own Vert.x, a settable clock and an HTTP
 * client aimed at it. Blocking helpers are for the test thread only.
 */
public final class TestNode implements AutoCloseable {

    public static final Duration WAIT = Duration.ofSeconds(60);

    /**
     * How long a wait on {@link TaskSignals} goes without a signal before it reads anyway: a safety
     * net for a write no in-process journal tells of (another process's), not the way a wait is
     * meant to end; one that ends so says it on stderr.
     */
    static final Duration UNSIGNALLED = Duration.ofSeconds(1);

    public final Vertx vertx;
    public final Taskline node;
    public final WebClient http;
    public final MutableClock clock;

    private final String pgUrl;
    private Pool otherPool;

    private TestNode(Vertx vertx, Taskline node, MutableClock clock, String pgUrl) {
        this.vertx = vertx;
        this.pgUrl = pgUrl;
        this.node = node;
        this.clock = clock;
        this.http = WebClient.create(
                vertx, new WebClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(node.httpPort()));
        node.onTaskEvents(TaskSignals::changed);
    }

    /**
     * Starts a node on {@code pgUrl}. {@code configJson} is a config file's text; the HTTP port is
     * always 0 (a free one) and the periodic recovery pass is off unless the config sets it, so tests
     * drive it with {@code runOnce()}.
     */
    public static TestNode start(String pgUrl, String configJson, MutableClock clock) throws Exception {
        return start(pgUrl, configJson, clock, null);
    }

    /** As above, with the retry jitter fixed (draws from [0, 1]) so that backoff delays are exact. */
    public static TestNode start(
            String pgUrl, String configJson, MutableClock clock, java.util.function.DoubleSupplier jitter)
            throws Exception {
        JsonObject json = new JsonObject(configJson);
        JsonObject httpConf = json.getJsonObject("http", new JsonObject()).put("port", 0);
        json.put("http", httpConf);
        JsonObject recovery = json.getJsonObject("recovery", new JsonObject());
        if (!recovery.containsKey("intervalMs")) {
            recovery.put("intervalMs", 3_600_000);
        }
        json.put("recovery", recovery);
        TasklineConfig config = ConfigLoader.fromJson(json.encode(), Map.of(ConfigLoader.ENV_PG_URL, pgUrl));
        Vertx vertx = Vertx.vertx();
        try {
            Taskline node = await(
                    Taskline.start(vertx, config, clock, new dev.taskline.metrics.TasklineMetrics(clock), jitter));
            return new TestNode(vertx, node, clock, pgUrl);
        } catch (Exception e) {
            vertx.close();
            throw e;
        }
    }

    public static TestNode start(String pgUrl, String configJson) throws Exception {
        return start(pgUrl, configJson, new MutableClock());
    }

    public HttpResponse<Buffer> post(String path, JsonObject body) throws Exception {
        return await(
                http.post(path).putHeader("Content-Type", "application/json").sendBuffer(Buffer.buffer(body.encode())));
    }

    public HttpResponse<Buffer> post(String path, String contentType, Buffer body) throws Exception {
        var request = http.post(path);
        if (contentType != null) {
            request.putHeader("Content-Type", contentType);
        }
        return await(request.sendBuffer(body));
    }

    public HttpResponse<Buffer> get(String path) throws Exception {
        return await(http.get(path).send());
    }

    /** The value of the first Prometheus line that starts with {@code series} (name and labels); NaN if none. */
    public double metric(String series) throws Exception {
        String prefix = series + " ";
        for (String line : get("/metrics").bodyAsString().split("\n")) {
            if (line.startsWith(prefix)) {
                return Double.parseDouble(line.substring(prefix.length()).trim());
            }
        }
        return Double.NaN;
    }

    public JsonObject getJson(String path) throws Exception {
        HttpResponse<Buffer> response = get(path);
        if (response.statusCode() != 200) {
            throw new AssertionError(
                    "GET " + path + " answered " + response.statusCode() + ": " + response.bodyAsString());
        }
        return response.bodyAsJsonObject();
    }

    /** Reads {@code path} until {@code done} holds, failing after {@link #WAIT}. */
    public JsonObject until(String path, Predicate<JsonObject> done) throws Exception {
        JsonObject[] last = {null};
        until(() -> done.test(last[0] = getJson(path)), () -> "on " + path + "; last answer: " + last[0]);
        return last[0];
    }

    /** Something the test reads again and again: a read model, another process's state. */
    public interface Check {
        boolean holds() throws Exception;
    }

    /** Reads {@code check} until it holds, failing after {@link #WAIT} with {@code what}. */
    public void until(Check check, java.util.function.Supplier<String> what) throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        while (System.nanoTime() < deadline) {
            if (check.holds()) {
                return;
            }
            // Polling a read model is the signal here; a short pause keeps it from hogging the CPU.
            await(vertxTimer(20));
        }
        throw new AssertionError("condition not met within " + WAIT + " " + what.get());
    }

    /**
     * Moves the clock and runs the promoter once, as its timer would when the time came. Returns how
     * many tasks this pass moved: 0 proves nothing was due, but a due task may have been moved by the
     * promoter's own safety tick a moment earlier, so wait for its effect instead of counting.
     */
    public int advance(Duration by) throws Exception {
        clock.advance(by);
        return await(node.passes().promoter().runOnce());
    }

    /**
     * Moves the clock and runs the waker once, as its timer would when the time came: suspended
     * tasks whose sleep or wait ended are woken. Returns how many it woke.
     */
    public int wake(Duration by) throws Exception {
        clock.advance(by);
        return await(node.passes().waker().runOnce());
    }

    /**
     * Waits until task {@code taskId} is in {@code state}, reading it once, then again after each
     * journal event of it (see {@link TaskSignals}); answers the task as that last read showed it.
     */
    public JsonObject waitForState(String taskId, String state) throws Exception {
        return waitForTask(taskId, task -> state.equals(task.getString("state")), "state " + state);
    }

    /**
     * Waits until {@code done} holds of task {@code taskId} ({@code GET /api/tasks/{id}}), reading it
     * once, then again after each journal event of it; for what only its events change (its state,
     * attempt, history), not its progress or wait. Fails after {@link #WAIT}.
     */
    public JsonObject waitForTask(String taskId, Predicate<JsonObject> done, String what) throws Exception {
        Set<UUID> task = Set.of(UUID.fromString(taskId));
        return waitOn("task " + taskId, "/api/tasks/" + taskId, task, answer -> task, done, what);
    }

    /** As {@link #waitForState}, for flow {@code flowId} ({@code GET /api/flows/{id}}). */
    public JsonObject waitForFlowState(String flowId, String state) throws Exception {
        return waitForFlow(flowId, flow -> state.equals(flow.getString("state")), "state " + state);
    }

    /**
     * As {@link #waitForTask}, for flow {@code flowId}: read again after each journal event of a task
     * its answer lists (of any task while it lists only a page of them), as a flow's counters move
     * only in a write that moves one of its tasks.
     */
    public JsonObject waitForFlow(String flowId, Predicate<JsonObject> done, String what) throws Exception {
        return waitOn("flow " + flowId, "/api/flows/" + flowId, null, TestNode::tasksOf, done, what);
    }

    /**
     * As {@link #waitForTask}, for batch {@code batchId} ({@code GET /api/batches/{id}}): its counts
     * move only with its tasks' states.
     */
    public JsonObject waitForBatch(String batchId, Predicate<JsonObject> done, String what) throws Exception {
        return waitOn("batch " + batchId, "/api/batches/" + batchId, null, TestNode::tasksOfBatch, done, what);
    }

    /** The tasks of a batch answer; null (any task) when it lists fewer than the batch has. */
    private static Set<UUID> tasksOfBatch(JsonObject batch) {
        JsonArray tasks = batch.getJsonArray("tasks");
        return tasks.size() < batch.getInteger("size") ? null : ids(tasks);
    }

    /** The tasks whose events may change a flow's answer; null (any task) when it shows only a page. */
    private static Set<UUID> tasksOf(JsonObject flow) {
        if (flow.getValue("next") != null) {
            return null;
        }
        return ids(flow.getJsonArray("tasks"));
    }

    private static Set<UUID> ids(JsonArray tasks) {
        Set<UUID> ids = new HashSet<>();
        tasks.forEach(t -> ids.add(UUID.fromString(((JsonObject) t).getString("id"))));
        return ids;
    }

    /**
     * Reads {@code path} until {@code done} holds, again after each signal of the tasks {@code
     * watched} names from the last answer (null: of any task), first of {@code tasks}. A watch is
     * in place before each read, so that a commit after the read always wakes the next wait.
     */
    private JsonObject waitOn(
            String subject,
            String path,
            Set<UUID> tasks,
            Function<JsonObject, Set<UUID>> watched,
            Predicate<JsonObject> done,
            String what)
            throws Exception {
        long deadline = System.nanoTime() + WAIT.toNanos();
        TaskSignals.Watch watch = TaskSignals.watch(tasks);
        try {
            boolean signalled = true;
            while (true) {
                watch.clear();
                JsonObject last = getJson(path);
                if (done.test(last)) {
                    if (!signalled) {
                        System.err.println("UNSIGNALLED: " + subject + " reached " + what + " with no signal of it");
                    }
                    return last;
                }
                long left = deadline - System.nanoTime();
                if (left <= 0) {
                    throw new AssertionError(subject + " did not reach " + what + " within " + WAIT
                            + "; last state seen: " + last.getString("state") + "; last answer: " + last);
                }
                Set<UUID> now = watched.apply(last);
                if (!Objects.equals(now, tasks)) {
                    TaskSignals.Watch next = TaskSignals.watch(now);
                    // A commit between the read and the new watch was heard by the old one only.
                    boolean missed = watch.await(0);
                    watch.close();
                    watch = next;
                    tasks = now;
                    if (missed) {
                        signalled = true;
                        continue;
                    }
                }
                signalled = watch.await(Math.min(left, UNSIGNALLED.toNanos()));
            }
        } finally {
            watch.close();
        }
    }

    private Future<Long> vertxTimer(long ms) {
        return vertx.timer(ms, TimeUnit.MILLISECONDS).map(ms);
    }

    public static <T> T await(Future<T> future) throws Exception {
        return future.toCompletionStage().toCompletableFuture().get(WAIT.toSeconds(), TimeUnit.SECONDS);
    }

    /**
     * A journal on this node's database with a pool of its own, at the node's clock: what another
     * node would write through (closed with this node).
     */
    public synchronized Journal otherJournal() {
        if (otherPool == null) {
            otherPool = PgBuilder.pool()
                    .with(new PoolOptions().setMaxSize(2))
                    .connectingTo(PgUrl.parse(pgUrl))
                    .using(vertx)
                    .build();
        }
        Journal journal = new Journal(otherPool, clock);
        journal.signals(new JournalSignals() {
            @Override
            public void changed(java.util.Collection<UUID> ids) {
                TaskSignals.changed(ids);
            }

            @Override
            public void settled(Settled settled) {
                // Another node's settlements are its own to act on; tests only wait for events.
            }
        });
        return journal;
    }

    @Override
    public void close() throws Exception {
        if (otherPool != null) {
            await(otherPool.close());
        }
        try {
            await(node.close());
        } catch (java.util.concurrent.TimeoutException e) {
            // A close that hangs (seen once in ScheduleNodesTest, not reproduced since): what every
            // thread was doing, so that the next occurrence names the part that did not stop.
            StringBuilder dump = new StringBuilder("node close timed out; threads:\n");
            Thread.getAllStackTraces().forEach((thread, stack) -> {
                dump.append(thread.getName()).append('\n');
                for (StackTraceElement frame : stack) {
                    dump.append("    at ").append(frame).append('\n');
                }
            });
            System.err.println(dump);
            throw e;
        } finally {
            await(vertx.close());
        }
    }

    /** The worker that claimed task {@code id} first, from its history. */
    public String claimedBy(String id) throws Exception {
        io.vertx.core.json.JsonArray history = getJson("/api/tasks/" + id).getJsonArray("history");
        for (int i = 0; i < history.size(); i++) {
            JsonObject event = history.getJsonObject(i);
            if ("claimed".equals(event.getString("reason"))) {
                return event.getString("workerId");
            }
        }
        throw new AssertionError("not claimed: " + history.encode());
    }

    public static Clock systemClock() {
        return Clock.systemUTC();
    }

    /** The entry of queue {@code name} in a GET /api/queues answer; fails when there is none. */
    public static JsonObject queueIn(JsonObject queues, String name) {
        return queues.getJsonArray("queues").stream()
                .map(q -> (JsonObject) q)
                .filter(q -> q.getString("name").equals(name))
                .findFirst()
                .orElseThrow();
    }

    /** The reasons of a task's history (GET /api/tasks/{id}), in journal order. */
    public static List<String> reasons(JsonObject task) {
        return task.getJsonArray("history").stream()
                .map(e -> ((JsonObject) e).getString("reason"))
                .toList();
    }
}
