package dev.taskline.testing;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Clients posting single tasks to the nodes in turn, one request each at a time, until stopped: the
 * load under which the journal is taken away (a killed primary, a restarted pooler). What each
 * answer was is kept; a 503 is followed by a short pause, as a client honouring Retry-After.
 */
public final class SubmitLoad {

    private final List<TestNode> nodes;
    public final Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
    public final List<UUID> accepted = Collections.synchronizedList(new ArrayList<>());
    public final List<String> withoutRetryAfter = Collections.synchronizedList(new ArrayList<>());
    private final AtomicInteger sent = new AtomicInteger();
    private final AtomicBoolean stopping = new AtomicBoolean();
    private final int clients;
    private final CountDownLatch stopped;
    /** Answers by status, each time one comes: what the test waits on. */
    private final Map<Integer, AtomicLong> lastAnswered = new ConcurrentHashMap<>();

    private final Object answered = new Object();

    public SubmitLoad(List<TestNode> nodes, int clients) {
        this.nodes = nodes;
        this.clients = clients;
        this.stopped = new CountDownLatch(clients);
    }

    public void start() {
        RunsHandler.reset();
        for (int i = 0; i < clients; i++) {
            TestNode node = nodes.get(0);
            node.vertx.runOnContext(v -> next());
        }
    }

    private void next() {
        if (stopping.get()) {
            stopped.countDown();
            return;
        }
        TestNode node = nodes.get(sent.getAndIncrement() % nodes.size());
        JsonObject task = new JsonObject().put("type", "runs").put("payload", new JsonObject().put("ms", 5));
        node.http
                .post("/api/tasks")
                .putHeader("Content-Type", "application/json")
                .sendJsonObject(task)
                .onComplete(r -> {
                    int status = r.succeeded() ? r.result().statusCode() : -1;
                    if (status == 202) {
                        accepted.add(
                                UUID.fromString(r.result().bodyAsJsonObject().getString("id")));
                    } else if (status == 503 && r.result().getHeader("Retry-After") == null) {
                        withoutRetryAfter.add(r.result().bodyAsString());
                    } else if (status == 503) {
                        // A client honours Retry-After; a short pause keeps the log of 503s readable.
                        statuses.merge(status, 1, Integer::sum);
                        note(status);
                        node.vertx.setTimer(20, t -> next());
                        return;
                    }
                    statuses.merge(status, 1, Integer::sum);
                    note(status);
                    next();
                });
    }

    private void note(int status) {
        lastAnswered.computeIfAbsent(status, s -> new AtomicLong()).set(System.nanoTime());
        synchronized (answered) {
            answered.notifyAll();
        }
    }

    public int acceptedCount() {
        return accepted.size();
    }

    /** Until {@code count} tasks were answered 202. */
    public void accepted(int count) throws InterruptedException {
        until(() -> accepted.size() >= count, count + " tasks accepted");
    }

    public void untilAnswered(int status) throws InterruptedException {
        until(() -> lastAnswered.containsKey(status), "a " + status);
    }

    /** When the first 202 after {@code since} came. */
    public long firstAcceptedAfter(long since) throws InterruptedException {
        until(() -> lastAnswered.containsKey(202) && lastAnswered.get(202).get() > since, "a 202 after the promotion");
        return lastAnswered.get(202).get();
    }

    private void until(java.util.function.BooleanSupplier done, String what) throws InterruptedException {
        long deadline = System.nanoTime() + TestNode.WAIT.toNanos();
        synchronized (answered) {
            while (!done.getAsBoolean()) {
                long left = deadline - System.nanoTime();
                assertTrue(left > 0, "no " + what + "; answers so far: " + new TreeMap<>(statuses));
                answered.wait(Math.max(1, TimeUnit.NANOSECONDS.toMillis(left)));
            }
        }
    }

    public void stop() throws InterruptedException {
        stopping.set(true);
        assertTrue(stopped.await(TestNode.WAIT.toSeconds(), TimeUnit.SECONDS), "the clients did not stop");
    }

    /** Waits on the nodes' journal signals until every task succeeded, then checks none ran twice. */
    public static void everySucceededOnce(String url, List<UUID> ids) throws Exception {
        assertEquals(0L, everySucceeded(url, ids), "tasks claimed more than once");
    }

    /**
     * Waits on the nodes' journal signals until every task succeeded, each with one end journaled;
     * answers how many were claimed more than once (a claim whose answer was lost with its
     * connection holds its task until the lease lapses, and the next claim counts a second attempt).
     */
    public static long everySucceeded(String url, List<UUID> ids) throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            Pool pool = PgBuilder.pool()
                    .connectingTo(dev.taskline.journal.PgUrl.parse(url))
                    .using(vertx)
                    .build();
            UUID[] array = ids.toArray(new UUID[0]);
            long deadline = System.nanoTime() + TestNode.WAIT.toNanos();
            try (TaskSignals.Watch watch = TaskSignals.watch(null)) {
                while (true) {
                    watch.clear();
                    var row = await(pool.preparedQuery("SELECT count(*) FILTER (WHERE state = 'succeeded'),"
                                            + " count(*), count(*) FILTER (WHERE attempt > 1),"
                                            + " (SELECT count(*) FROM task_events e WHERE e.task_id = ANY($1)"
                                            + " AND e.to_state = 'succeeded')"
                                            + " FROM tasks WHERE id = ANY($1)")
                                    .execute(Tuple.of(array)))
                            .iterator()
                            .next();
                    assertEquals(
                            ids.size(), row.getLong(1).intValue(), "tasks answered 202 missing after the failover");
                    if (row.getLong(0) == ids.size()) {
                        assertEquals(row.getLong(0), row.getLong(3), "ends journaled for " + ids.size() + " tasks");
                        List<UUID> notOnce = ids.stream()
                                .filter(id -> RunsHandler.runs(id) != 1)
                                .toList();
                        assertEquals(List.of(), notOnce, "tasks whose handler did not run exactly once");
                        await(pool.close());
                        return row.getLong(2);
                    }
                    if (!watch.await(deadline - System.nanoTime())) {
                        var left = await(pool.preparedQuery("SELECT state, attempt, worker_id, count(*) FROM tasks"
                                                + " WHERE id = ANY($1) AND state <> 'succeeded' GROUP BY 1, 2, 3")
                                        .execute(Tuple.of(array)))
                                .iterator();
                        StringBuilder states = new StringBuilder();
                        left.forEachRemaining(
                                r -> states.append(r.deepToString()).append(' '));
                        throw new AssertionError(
                                row.getLong(0) + " of " + ids.size() + " succeeded; the others: " + states);
                    }
                }
            }
        } finally {
            await(vertx.close());
        }
    }
}
