package dev.taskline.admission;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.journal.PgUrl;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.SqlConnection;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * When a full insert's worth of submissions already waits for the journal, the next one is
 * refused at once (429, journal-busy) instead of queueing behind them, and nothing of it is
 * journaled. The journal is held still by a lock that blocks inserts into tasks.
 */
class JournalBusyTest {

    private static final int MAX_WAITING = 2;
    private static String url;
    private static TestNode node;
    private static Pool locker;

    @BeforeAll
    static void start() throws Exception {
        url = TestPostgres.newDatabase();
        node = TestNode.start(
                url,
                "{\"journal\": {\"maxWaitingInserts\": " + MAX_WAITING + "},"
                        + " \"queues\": {\"default\": {\"slots\": 4, \"capacity\": 100}}}");
        locker = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(2))
                .connectingTo(PgUrl.parse(url))
                .using(node.vertx)
                .build();
    }

    @AfterAll
    static void stop() throws Exception {
        await(locker.close());
        node.close();
    }

    private static JsonObject task() {
        return new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0));
    }

    private static Future<HttpResponse<Buffer>> send() {
        return node.http.post("/api/tasks").sendJsonObject(task());
    }

    @Test
    void a_submission_beyond_the_waiting_bound_gets_429_at_once_and_the_others_commit_later() throws Exception {
        SqlConnection lock = await(locker.getConnection());
        await(lock.query("BEGIN").execute());
        await(lock.query("LOCK TABLE tasks IN SHARE MODE").execute());

        List<Future<HttpResponse<Buffer>>> held = new ArrayList<>();
        held.add(send());
        // The first submission's insert is in flight, blocked on the lock ...
        node.until(() -> lockWaiters(" AND query LIKE '%INSERT INTO tasks%'") == 1, () -> "for the insert to wait");
        // ... and the next ones wait behind it, up to the bound.
        for (int i = 0; i < MAX_WAITING; i++) {
            held.add(send());
        }
        node.until(() -> node.metric("taskline_journal_waiting_inserts") == MAX_WAITING, () -> "for waiting inserts");

        HttpResponse<Buffer> refused = node.post("/api/tasks", task());
        assertEquals(429, refused.statusCode(), refused.bodyAsString());
        assertEquals("1", refused.getHeader("Retry-After"));
        JsonObject problem = refused.bodyAsJsonObject();
        assertEquals("Journal busy", problem.getString("title"));
        assertEquals(MAX_WAITING, problem.getInteger("waiting"));
        assertEquals(1.0, node.metric("taskline_tasks_rejected_total{queue=\"default\",reason=\"journal_busy\"}"));
        assertEquals(1.0, node.metric("taskline_refusal_latency_seconds_count"), "the refusal was timed");

        // A keyed submission commits in a transaction of its own, not in the grouped insert: the
        // bound is not its business, so it waits for the lock like the others instead of a 429.
        Future<HttpResponse<Buffer>> keyed = node.http
                .post("/api/tasks")
                .putHeader("Idempotency-Key", "busy-1")
                .sendJsonObject(task());
        node.until(() -> lockWaiters("") == 2, () -> "for the keyed insert to wait");
        held.add(keyed);

        await(lock.query("COMMIT").execute());
        await(lock.close());
        for (Future<HttpResponse<Buffer>> response : held) {
            assertEquals(202, await(response).statusCode());
        }
        JsonObject queue = node.getJson("/api/queues").getJsonArray("queues").getJsonObject(0);
        assertEquals(2 + MAX_WAITING, queue.getInteger("accepted"), "the refused one was not journaled: " + queue);
        node.until(
                "/api/tasks?state=succeeded", page -> page.getJsonArray("tasks").size() == 2 + MAX_WAITING);
        assertEquals(
                2 + MAX_WAITING,
                node.getJson("/api/tasks").getJsonArray("tasks").size());
    }

    /** Sessions of the journal waiting for a lock, among those matching {@code and}. */
    private static long lockWaiters(String and) throws Exception {
        return await(locker.query("SELECT count(*) AS n FROM pg_stat_activity WHERE wait_event_type = 'Lock'" + and)
                        .execute())
                .iterator()
                .next()
                .getLong("n");
    }
}
