package dev.taskline.recovery;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.journal.Journal;
import dev.taskline.journal.Migrator;
import dev.taskline.journal.PgUrl;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * A node that starts on a journal holding more waiting work than its queue holds loads what fits,
 * and pages in the rest as room frees, without waiting for the timed recovery pass.
 */
class ReloadTest {

    @Test
    void waiting_work_beyond_capacity_is_paged_in_as_room_frees() throws Exception {
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock();
        int total = 25;
        Vertx vertx = Vertx.vertx();
        Pool pool = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(2))
                .connectingTo(PgUrl.parse(db))
                .using(vertx)
                .build();
        try {
            await(Migrator.migrate(vertx, pool));
            Journal journal = new Journal(pool, clock);
            List<Insert> tasks = new ArrayList<>();
            for (int i = 0; i < total; i++) {
                tasks.add(Insert.waiting(Task.builder(TaskIds.next(clock), "default", "sleep")
                        .payloadJson(new JsonObject().put("ms", 0).encode())
                        .runAt(clock.instant())
                        .build()));
            }
            await(journal.insert(tasks));
        } finally {
            await(pool.close());
            await(vertx.close());
        }

        // Capacity 4 and no timed pass (TestNode turns it off): only the room signal can page in.
        try (TestNode node =
                TestNode.start(db, "{\"queues\": {\"default\": {\"slots\": 2, \"capacity\": 4}}}", clock)) {
            JsonObject page = node.until(
                    "/api/tasks?state=succeeded&limit=1000",
                    p -> p.getJsonArray("tasks").size() == total);
            assertEquals(total, page.getJsonArray("tasks").size());
            assertEquals(
                    0,
                    node.getJson("/api/tasks?state=pending")
                            .getJsonArray("tasks")
                            .size());
        }
    }

    @Test
    void a_journaled_payload_that_is_not_a_json_object_fails_its_task_and_frees_the_slot() throws Exception {
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock();
        Vertx vertx = Vertx.vertx();
        Pool pool = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(2))
                .connectingTo(PgUrl.parse(db))
                .using(vertx)
                .build();
        Insert odd = Insert.waiting(Task.builder(TaskIds.next(clock), "default", "sleep")
                .payloadJson("[1, 2]")
                .runAt(clock.instant())
                .maxAttempts(3)
                .build());
        Insert fine = Insert.waiting(Task.builder(TaskIds.next(clock), "default", "sleep")
                .payloadJson("{\"ms\": 0}")
                .runAt(clock.instant())
                .build());
        try {
            await(Migrator.migrate(vertx, pool));
            // Written by something other than a node (a node only journals JSON objects).
            await(new Journal(pool, clock).insert(List.of(odd, fine)));
        } finally {
            await(pool.close());
            await(vertx.close());
        }

        // One slot: had the odd task kept it, the fine one would never run.
        try (TestNode node = TestNode.start(db, "{\"queues\": {\"default\": {\"slots\": 1}}}", clock)) {
            JsonObject failed = node.waitForState(odd.task().id().toString(), "failed");
            assertEquals(1, failed.getInteger("attempt"), "no retry: no attempt could read it");
            assertTrue(failed.encode().contains("not a JSON object"), failed.encode());
            node.waitForState(fine.task().id().toString(), "succeeded");
        }
    }
}
