package dev.taskline.http;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.journal.JournalReads;
import dev.taskline.journal.PgUrl;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import org.junit.jupiter.api.Test;

/**
 * A page of a list reads a bounded window of the journal, whatever its filters match
 * ({@link JournalReads#LIST_SCAN} tasks): a filter that matches little of a big journal answers at
 * once with a short page (or none) and a {@code next} that goes on past the window, so that no
 * request reads the whole journal, and following {@code next} finds every match.
 */
class ListWindowTest {

    @Test
    void a_filter_that_matches_little_answers_a_window_at_a_time_and_following_next_finds_it() throws Exception {
        String url = TestPostgres.newDatabase();
        Vertx vertx = Vertx.vertx();
        Pool pool = PgBuilder.pool().connectingTo(PgUrl.parse(url)).using(vertx).build();
        int many = JournalReads.LIST_SCAN * 2 + 500;
        try (TestNode node = TestNode.start(url, "{\"queues\": {\"default\": {\"slots\": 1}}}")) {
            // Finished tasks of the last minutes, in the unit the node made for now: the oldest one
            // (g = 0) of a queue of its own, the others all of one queue.
            String id = "(lpad(to_hex((extract(epoch FROM now()) * 1000)::bigint - 200000 + g), 12, '0')"
                    + " || '7000' || '8000' || lpad(to_hex(g), 12, '0'))::uuid";
            await(pool.preparedQuery("INSERT INTO tasks (id, queue, type, state, payload, result, run_at, attempt,"
                            + " created_at, updated_at, started_at, finished_at) SELECT " + id
                            + ", CASE WHEN g = 0 THEN 'rare' ELSE 'bulk' END, 'sleep', 'succeeded', '{}', '{}',"
                            + " now(), 1, now(), now(), now(), now() FROM generate_series(0, $1) g")
                    .execute(Tuple.of(many - 1)));

            JsonObject first = node.getJson("/api/tasks?queue=rare&limit=10");
            assertEquals(0, first.getJsonArray("tasks").size(), "the newest window holds none of it");
            assertNotNull(first.getString("next"), "and says where to go on");
            String next = first.getString("next");
            JsonObject found = null;
            for (int page = 0; page < 3 && found == null; page++) {
                JsonObject answer = node.getJson("/api/tasks?queue=rare&limit=10&after=" + next);
                if (!answer.getJsonArray("tasks").isEmpty()) {
                    found = answer;
                } else {
                    next = answer.getString("next");
                    assertNotNull(next, "every full window says where to go on");
                }
            }
            assertNotNull(found, "the match lies within three windows of the newest");
            assertEquals(1, found.getJsonArray("tasks").size());
            assertEquals("rare", found.getJsonArray("tasks").getJsonObject(0).getString("queue"));
            assertNull(found.getString("next"), "nothing lies past the oldest task");

            // A page whose filter matches is full, and goes on from its last task.
            JsonObject bulk = node.getJson("/api/tasks?queue=bulk&limit=100");
            assertEquals(100, bulk.getJsonArray("tasks").size());
            assertEquals(bulk.getJsonArray("tasks").getJsonObject(99).getString("id"), bulk.getString("next"));
            // Dead letters are read through their own index: none, and nothing to go on with.
            JsonObject failed = node.getJson("/api/tasks?state=failed&limit=100");
            assertEquals(0, failed.getJsonArray("tasks").size());
            assertNull(failed.getString("next"));
            assertTrue(node.getJson("/api/tasks?state=cancelled&limit=5").getString("next") != null);
        } finally {
            await(pool.close());
            await(vertx.close());
        }
    }
}
