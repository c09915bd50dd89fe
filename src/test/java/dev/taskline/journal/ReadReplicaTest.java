package dev.taskline.journal;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assumptions.assumeTrue;

import dev.taskline.testing.PgPair;
import dev.taskline.testing.TestNode;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.nio.file.Path;
import org.junit.jupiter.api.Test;

/**
 * A node with a read replica (journal.readUrl: the pair's standby, streaming from the primary): the
 * lists go there and may be behind, a task's own read never. With the standby's replay paused, a
 * task answered 202 is read at once by its id, from the primary, while the list, from the standby,
 * does not show it yet; once replay resumes, the list catches up.
 */
class ReadReplicaTest {

    @Test
    void lists_read_the_replica_and_a_tasks_own_read_the_primary() throws Exception {
        Path bin = PgPair.binaries();
        assumeTrue(bin != null, "no PostgreSQL 15 binaries on this machine");
        try (PgPair pair = PgPair.start(bin)) {
            String config = new JsonObject()
                    .put("journal", new JsonObject().put("readUrl", pair.standbyUrl()))
                    .put("queues", new JsonObject().put("default", new JsonObject().put("slots", 2)))
                    .encode();
            try (TestNode node = TestNode.start(pair.primaryUrl(), config)) {
                String before = submit(node);
                node.waitForState(before, "succeeded");
                node.until(() -> listed(node, before), () -> "the first task in the list");

                pair.standbySql("SELECT pg_wal_replay_pause()");
                String during = submit(node);
                // Its own read, right after the 202: the primary's.
                assertEquals(during, node.waitForState(during, "succeeded").getString("id"));
                assertFalse(
                        listed(node, during), "a list read the primary: it shows a task the replica has not replayed");

                pair.standbySql("SELECT pg_wal_replay_resume()");
                node.until(() -> listed(node, during), () -> "the list caught up once replay resumed");
            }
        }
    }

    private static String submit(TestNode node) throws Exception {
        var answer = node.post(
                "/api/tasks", new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 1)));
        assertEquals(202, answer.statusCode(), answer.bodyAsString());
        return answer.bodyAsJsonObject().getString("id");
    }

    private static boolean listed(TestNode node, String id) throws Exception {
        JsonArray tasks = node.getJson("/api/tasks?limit=100").getJsonArray("tasks");
        return tasks.stream().anyMatch(t -> id.equals(((JsonObject) t).getString("id")));
    }
}
