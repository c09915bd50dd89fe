package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.taskline.testing.PgPair;
import dev.taskline.testing.TaskSignals;
import dev.taskline.testing.TestNode;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.nio.file.Path;
import java.time.Duration;
import java.util.ArrayList;
import java.util.Collections;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.CountDownLatch;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.concurrent.atomic.AtomicLong;
import org.junit.jupiter.api.Test;

/**
 * A primary with a synchronous standby, two nodes on a URL that names both ({@code
 * target_session_attrs=read-write}), tasks submitted to both without pause; the primary is killed as
 * its machine would die and the standby promoted. Every task answered 202 is there afterwards and
 * succeeds exactly once (attempt 1: never run a second time), every other answer is a 503 with
 * Retry-After, never a 500, the nodes are not ready while no primary answers, and writes are
 * accepted again within 10 s of the promotion, without a restart.
 */
class FailoverTest {

    private static final String CONFIG = "{\"queues\": {\"default\": {\"capacity\": 100000, \"slots\": 8}}}";
    private static final int CLIENTS = 4;
    private static final Duration WRITES_BACK_WITHIN = Duration.ofSeconds(10);

    @Test
    void a_killed_primary_loses_nothing_acknowledged_and_writes_come_back_on_the_promoted_standby() throws Exception {
        Path bin = PgPair.binaries();
        assumeTrue(bin != null, "no PostgreSQL 15 binaries on this machine");
        try (PgPair pair = PgPair.start(bin);
                TestNode a = TestNode.start(pair.url(), CONFIG);
                TestNode b = TestNode.start(pair.url(), CONFIG)) {
            Load load = new Load(List.of(a, b));
            load.start();
            load.accepted(300);

            pair.killPrimary();
            load.untilAnswered(503);
            assertEquals(503, await(a.http.get("/health/ready").send()).statusCode(), "ready with no primary");
            long promoted = System.nanoTime();
            pair.promote();

            long back = load.firstAcceptedAfter(promoted);
            assertTrue(
                    back - promoted < WRITES_BACK_WITHIN.toNanos(),
                    "writes came back " + TimeUnit.NANOSECONDS.toMillis(back - promoted) + " ms after the promotion");
            load.accepted(load.acceptedCount() + 300);
            load.stop();

            assertTrue(Set.of(202, 503).containsAll(load.statuses.keySet()), "answers: " + load.statuses);
            assertEquals(List.of(), load.withoutRetryAfter, "a 503 without Retry-After");
            // Ready again at once: the node's pools share one choice of server with the writes that came back.
            assertEquals(200, await(a.http.get("/health/ready").send()).statusCode(), "node a ready again");
            assertEquals(200, await(b.http.get("/health/ready").send()).statusCode(), "node b ready again");

            List<UUID> accepted = new ArrayList<>(load.accepted);
            everySucceededOnce(pair.standbyUrl(), accepted);
            // The figures the load test reports at length, for the log.
            System.out.println("failover: writes back " + TimeUnit.NANOSECONDS.toMillis(back - promoted)
                    + " ms after the promotion; answers " + new TreeMap<>(load.statuses) + "; "
                    + accepted.size() + " accepted, all succeeded once");
        }
    }

    /** Waits on the nodes' journal signals until every task succeeded, then checks none ran twice. */
    private static void everySucceededOnce(String url, List<UUID> ids) throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            Pool pool =
                    PgBuilder.pool().connectingTo(PgUrl.parse(url)).using(vertx).build();
            UUID[] array = ids.toArray(new UUID[0]);
            long deadline = System.nanoTime() + TestNode.WAIT.toNanos();
            try (TaskSignals.Watch watch = TaskSignals.watch(null)) {
                while (true) {
                    watch.clear();
                    var row = await(pool.preparedQuery("SELECT count(*) FILTER (WHERE state = 'succeeded'),"
                                            + " count(*), count(*) FILTER (WHERE attempt > 1)"
                                            + " FROM tasks WHERE id = ANY($1)")
                                    .execute(Tuple.of(array)))
                            .iterator()
                            .next();
                    assertEquals(
                            ids.size(), row.getLong(1).intValue(), "tasks answered 202 missing after the failover");
                    assertEquals(0L, row.getLong(2), "tasks ran more than once");
                    if (row.getLong(0) == ids.size()) {
                        break;
                    }
                    assertTrue(
                            watch.await(deadline - System.nanoTime()),
                            row.getLong(0) + " of " + ids.size() + " succeeded");
                }
            }
            await(pool.close());
        } finally {
            await(vertx.close());
        }
    }

    /** Clients posting single tasks to the nodes in turn, one request each at a time, until stopped. */
    private static final class Load {

        private final List<TestNode> nodes;
        final Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
        final List<UUID> accepted = Collections.synchronizedList(new ArrayList<>());
        final List<String> withoutRetryAfter = Collections.synchronizedList(new ArrayList<>());
        private final AtomicInteger sent = new AtomicInteger();
        private final AtomicBoolean stopping = new AtomicBoolean();
        private final CountDownLatch stopped = new CountDownLatch(CLIENTS);
        /** Answers by status, each time one comes: what the test waits on. */
        private final Map<Integer, AtomicLong> lastAnswered = new ConcurrentHashMap<>();

        private final Object answered = new Object();

        Load(List<TestNode> nodes) {
            this.nodes = nodes;
        }

        void start() {
            for (int i = 0; i < CLIENTS; i++) {
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
            JsonObject task = new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 5));
            node.http
                    .post("/api/tasks")
                    .putHeader("Content-Type", "application/json")
                    .sendJsonObject(task)
                    .onComplete(r -> {
                        int status = r.succeeded() ? r.result().statusCode() : -1;
                        if (status == 202) {
                            accepted.add(UUID.fromString(
                                    r.result().bodyAsJsonObject().getString("id")));
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

        int acceptedCount() {
            return accepted.size();
        }

        /** Until {@code count} tasks were answered 202. */
        void accepted(int count) throws InterruptedException {
            until(() -> accepted.size() >= count, count + " tasks accepted");
        }

        void untilAnswered(int status) throws InterruptedException {
            until(() -> lastAnswered.containsKey(status), "a " + status);
        }

        /** When the first 202 after {@code since} came. */
        long firstAcceptedAfter(long since) throws InterruptedException {
            until(
                    () -> lastAnswered.containsKey(202) && lastAnswered.get(202).get() > since,
                    "a 202 after the promotion");
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

        void stop() throws InterruptedException {
            stopping.set(true);
            assertTrue(stopped.await(TestNode.WAIT.toSeconds(), TimeUnit.SECONDS), "the clients did not stop");
        }
    }
}
