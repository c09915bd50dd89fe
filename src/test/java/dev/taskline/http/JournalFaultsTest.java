package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.journal.EmbeddedPostgresServer;
import dev.taskline.journal.JournalReads;
import dev.taskline.journal.PgUrl;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/**
 * The journal breaking under a node at work: its connections ended by an operator, its server
 * stopped. Every request is answered 202 or 503 (with Retry-After), never 500, and every task
 * answered 202 is in the journal.
 */
class JournalFaultsTest {

    private static final String CONFIG = "{\"queues\": {\"default\": {\"capacity\": 100000}}}";
    private static final int CLIENTS = 6;

    /** What the load was answered: statuses counted, and the ids of the tasks accepted. */
    private record Answers(Map<Integer, Integer> statuses, List<String> accepted, List<String> without) {}

    /**
     * Posts single tasks and batches from {@link #CLIENTS} clients, one request each at a time, until
     * {@code total} are answered; {@code faults} runs (on a thread of its own) after each of the
     * counts in {@code at} answers, so that the faults fall among requests in flight.
     */
    private static Answers load(TestNode node, int total, int[] at, List<ThrowingRunnable> faults) throws Exception {
        Map<Integer, Integer> statuses = new ConcurrentHashMap<>();
        List<String> accepted = java.util.Collections.synchronizedList(new ArrayList<>());
        List<String> withoutRetryAfter = java.util.Collections.synchronizedList(new ArrayList<>());
        AtomicInteger answered = new AtomicInteger();
        AtomicInteger sent = new AtomicInteger();
        Promise<Void> done = Promise.promise();
        List<Thread> injectors = new ArrayList<>();
        Runnable[] next = new Runnable[1];
        next[0] = () -> {
            int n = sent.getAndIncrement();
            if (n >= total) {
                return;
            }
            boolean batch = n % 3 == 0;
            JsonObject task = new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0));
            Future<io.vertx.ext.web.client.HttpResponse<Buffer>> answer = batch
                    ? node.http
                            .post("/api/batches")
                            .putHeader("Content-Type", "application/json")
                            .sendJsonObject(new JsonObject()
                                    .put("tasks", new JsonArray().add(task).add(task.copy())))
                    : node.http
                            .post("/api/tasks")
                            .putHeader("Content-Type", "application/json")
                            .sendJsonObject(task);
            answer.onComplete(r -> {
                int status = r.succeeded() ? r.result().statusCode() : -1;
                statuses.merge(status, 1, Integer::sum);
                if (status == 202) {
                    JsonObject body = r.result().bodyAsJsonObject();
                    if (batch) {
                        body.getJsonArray("tasks").forEach(t -> accepted.add(((JsonObject) t).getString("id")));
                    } else {
                        accepted.add(body.getString("id"));
                    }
                } else if (status == 503 && r.result().getHeader("Retry-After") == null) {
                    withoutRetryAfter.add(r.result().bodyAsString());
                }
                int count = answered.incrementAndGet();
                for (int i = 0; i < at.length; i++) {
                    if (count == at[i]) {
                        ThrowingRunnable fault = faults.get(i);
                        Thread t = new Thread(() -> {
                            try {
                                fault.run();
                            } catch (Exception e) {
                                throw new RuntimeException(e);
                            }
                        });
                        injectors.add(t);
                        t.start();
                    }
                }
                if (count == total) {
                    done.tryComplete();
                } else {
                    next[0].run();
                }
            });
        };
        for (int i = 0; i < CLIENTS; i++) {
            node.vertx.runOnContext(v -> next[0].run());
        }
        await(done.future());
        for (Thread t : injectors) {
            t.join();
        }
        return new Answers(new TreeMap<>(statuses), accepted, withoutRetryAfter);
    }

    interface ThrowingRunnable {
        void run() throws Exception;
    }

    private static void assertAnsweredAsPromised(Answers answers) {
        Set<Integer> allowed = Set.of(202, 503);
        assertTrue(allowed.containsAll(answers.statuses().keySet()), "statuses: " + answers.statuses());
        assertEquals(List.of(), answers.without(), "a 503 without Retry-After");
    }

    @Test
    void sessions_ended_under_load_give_503_not_500_and_lose_nothing() throws Exception {
        String db = TestPostgres.newDatabase();
        try (TestNode node = TestNode.start(db, CONFIG)) {
            ThrowingRunnable terminate = () -> TestPostgres.terminateSessions(db);
            Answers answers = load(node, 600, new int[] {60, 200, 340}, List.of(terminate, terminate, terminate));
            assertAnsweredAsPromised(answers);
            assertTrue(answers.statuses().getOrDefault(202, 0) > 0, "statuses: " + answers.statuses());
            // The pool makes new connections: everything accepted is there to read.
            JournalReads reads = new JournalReads(otherPool(node, db));
            for (String id : answers.accepted()) {
                assertTrue(await(reads.state(UUID.fromString(id))) != null, "task " + id + " was answered 202");
            }
        }
    }

    @Test
    void a_journal_stopped_under_load_gives_503_not_500_and_loses_nothing() throws Exception {
        Path dir = Files.createTempDirectory("taskline-stopped-pg");
        // Durable: what a commit acknowledged must survive the crash of the backends, as in production.
        EmbeddedPostgresServer server = EmbeddedPostgresServer.start(dir, true);
        List<String> accepted;
        String url = server.url();
        try (TestNode node = TestNode.start(url, CONFIG)) {
            // First its backends die as if the machine took them (no goodbye: the node's sockets are
            // reset under requests in flight, and the server recovers from a crash); then, once it
            // takes connections again, the server stops.
            Answers answers = load(node, 400, new int[] {100, 200}, List.of(() -> killBackends(url), () -> {
                untilItAnswers(url);
                server.close();
            }));
            assertAnsweredAsPromised(answers);
            assertTrue(answers.statuses().getOrDefault(503, 0) > 0, "statuses: " + answers.statuses());
            accepted = answers.accepted();
        }
        // The same data, the server started again: every task answered 202 is in it.
        EmbeddedPostgresServer again = EmbeddedPostgresServer.start(dir, true);
        io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
        try {
            Pool pool = PgBuilder.pool()
                    .with(new PoolOptions().setMaxSize(2))
                    .connectingTo(PgUrl.parse(again.url()))
                    .using(vertx)
                    .build();
            JournalReads reads = new JournalReads(pool);
            for (String id : accepted) {
                assertTrue(await(reads.state(UUID.fromString(id))) != null, "task " + id + " was answered 202");
            }
            await(pool.close());
        } finally {
            await(vertx.close());
            again.close();
        }
    }

    /** Until the server at {@code url} runs a query (its crash recovery over), a tenth of a second apart. */
    private static void untilItAnswers(String url) throws Exception {
        long deadline = System.nanoTime() + TestNode.WAIT.toNanos();
        io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
        try {
            Pool pool = PgBuilder.pool()
                    .with(new PoolOptions().setMaxSize(1))
                    .connectingTo(PgUrl.parse(url))
                    .using(vertx)
                    .build();
            while (true) {
                try {
                    await(pool.query("SELECT 1").execute());
                    break;
                } catch (Exception e) {
                    if (System.nanoTime() > deadline) {
                        throw e;
                    }
                    await(vertx.timer(100));
                }
            }
            await(pool.close());
        } finally {
            await(vertx.close());
        }
    }

    /** SIGKILL to every client backend of the server at {@code url} but the one asking. */
    private static void killBackends(String url) throws Exception {
        io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
        try {
            Pool pool = PgBuilder.pool()
                    .with(new PoolOptions().setMaxSize(1))
                    .connectingTo(PgUrl.parse(url))
                    .using(vertx)
                    .build();
            for (io.vertx.sqlclient.Row row : await(pool.query("SELECT pid FROM pg_stat_activity"
                            + " WHERE backend_type = 'client backend' AND pid <> pg_backend_pid()")
                    .execute())) {
                ProcessHandle.of(row.getInteger("pid")).ifPresent(ProcessHandle::destroyForcibly);
            }
            await(pool.close());
        } finally {
            await(vertx.close());
        }
    }

    private static Pool otherPool(TestNode node, String db) {
        return PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(2))
                .connectingTo(PgUrl.parse(db))
                .using(node.vertx)
                .build();
    }
}
