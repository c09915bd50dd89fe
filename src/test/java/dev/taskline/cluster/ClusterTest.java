package dev.taskline.cluster;

import static dev.taskline.testing.TestNode.await;
import static dev.taskline.testing.TestNode.queueIn;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.auth.ApiKeys;
import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.SseClient;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.security.SecureRandom;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Two nodes on one journal learn of each other's changes through notifications. Every timed pass that
 * could do the same is slowed to an hour here (recovery's page-in, the switches, the streams'
 * catch-up), so each test passes only if the notification did the work.
 */
class ClusterTest {

    private static final String CONFIG = """
      {"queues": {"default": {"slots": 1, "claimAhead": 0}},
       "cluster": {"fallbackMs": 3600000},
       "worker": {"progressIntervalMs": 0}}
      """;

    @Test
    void a_task_waiting_on_a_busy_node_starts_on_an_idle_one_at_once() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, CONFIG, new MutableClock());
                TestNode b = TestNode.start(db, CONFIG, new MutableClock())) {
            String first = submit(a, "gate");
            GateHandler.Call running = GateHandler.next(TestNode.WAIT);
            assertEquals(first, running.taskId().toString());
            assertEquals(a.node.nodeId() + "/default", a.claimedBy(first), "a had a free slot: it took its own");

            // a's one slot is busy: the task waits in a's line, and b, told of it, takes it.
            String second = submit(a, "gate");
            GateHandler.Call taken = GateHandler.next(TestNode.WAIT);
            assertEquals(second, taken.taskId().toString());
            assertEquals(b.node.nodeId() + "/default", a.claimedBy(second));
            assertTrue(b.node.passes().wakeUps().paged() >= 1);

            taken.succeed(new JsonObject());
            running.succeed(new JsonObject());
            a.waitForState(first, "succeeded");
            JsonObject done = a.waitForState(second, "succeeded");
            // a's own claim of it, when its slot freed, was fenced: one claim, one end.
            assertEquals(List.of("submitted", "claimed", "succeeded"), TestNode.reasons(done));
            a.until("/api/queues", q -> queueIn(q, "default").getInteger("waiting") == 0);
        }
    }

    @Test
    void an_idle_node_keeps_taking_the_backlog_a_busy_one_holds_as_its_own_slot_frees() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, CONFIG, new MutableClock());
                TestNode b = TestNode.start(db, CONFIG, new MutableClock())) {
            String first = submit(a, "gate");
            GateHandler.Call onA = GateHandler.next(TestNode.WAIT);
            assertEquals(first, onA.taskId().toString());
            List<String> backlog = List.of(submit(a, "gate"), submit(a, "gate"), submit(a, "gate"));
            GateHandler.Call second = GateHandler.next(TestNode.WAIT);
            assertEquals(
                    b.node.nodeId() + "/default", a.claimedBy(second.taskId().toString()));
            // No submission comes now to say anything: b's own slot, freeing, goes for the next.
            second.succeed(new JsonObject());
            GateHandler.Call third = GateHandler.next(TestNode.WAIT);
            assertEquals(
                    b.node.nodeId() + "/default", a.claimedBy(third.taskId().toString()));
            assertTrue(backlog.contains(third.taskId().toString()));
            third.succeed(new JsonObject());
            onA.succeed(new JsonObject());
            GateHandler.next(TestNode.WAIT).succeed(new JsonObject());
            for (String id : backlog) {
                a.waitForState(id, "succeeded");
            }
        }
    }

    @Test
    void a_pause_and_a_resume_reach_the_other_node_at_once() throws Exception {
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, CONFIG, new MutableClock());
                TestNode b = TestNode.start(db, CONFIG, new MutableClock())) {
            assertEquals(
                    200, a.post("/api/queues/default/pause", new JsonObject()).statusCode());
            b.until("/api/queues", q -> queueIn(q, "default").getBoolean("paused"));
            assertEquals(
                    200, a.post("/api/queues/default/resume", new JsonObject()).statusCode());
            b.until("/api/queues", q -> !queueIn(q, "default").getBoolean("paused"));
        }
    }

    @Test
    void a_key_revoked_on_one_node_is_refused_on_the_other_at_once() throws Exception {
        String admin = ApiKeys.newSecret(new SecureRandom());
        JsonObject config = new JsonObject(CONFIG)
                .put(
                        "auth",
                        new JsonObject()
                                .put(
                                        "keys",
                                        new JsonArray()
                                                .add(new JsonObject()
                                                        .put("id", "ops")
                                                        .put("hash", ApiKeys.hash(admin))
                                                        .put("scopes", new JsonArray().add("admin")))));
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, config.encode(), new MutableClock());
                TestNode b = TestNode.start(db, config.encode(), new MutableClock())) {
            HttpResponse<Buffer> issued = await(a.http.post("/api/keys")
                    .putHeader("Authorization", "Bearer " + admin)
                    .sendJsonObject(new JsonObject().put("id", "reader").put("scopes", new JsonArray().add("read"))));
            assertEquals(201, issued.statusCode(), issued.bodyAsString());
            String secret = issued.bodyAsJsonObject().getString("secret");
            b.until(() -> status(b, secret) == 200, () -> "b accepts the new key");
            HttpResponse<Buffer> revoked = await(a.http.delete("/api/keys/reader")
                    .putHeader("Authorization", "Bearer " + admin)
                    .send());
            assertTrue(revoked.statusCode() < 300, revoked.bodyAsString());
            b.until(() -> status(b, secret) == 401, () -> "b refuses the revoked key");
        }
    }

    private static int status(TestNode node, String secret) throws Exception {
        return await(node.http
                        .get("/api/stats")
                        .putHeader("Authorization", "Bearer " + secret)
                        .send())
                .statusCode();
    }

    @Test
    void a_stream_on_one_node_follows_a_task_that_runs_on_the_other() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, CONFIG, new MutableClock());
                TestNode b = TestNode.start(db, CONFIG, new MutableClock())) {
            String id = submit(a, "gate");
            GateHandler.Call call = GateHandler.next(TestNode.WAIT);
            try (SseClient sse = SseClient.open(b.vertx, b.node.httpPort(), "/api/tasks/" + id + "/events", null)) {
                List<String> seen = new ArrayList<>();
                while (!seen.contains("state:running")) {
                    seen.add(name(sse.next()));
                }
                call.progress(50, "half way");
                SseClient.Event progress = sse.next();
                assertEquals("progress", progress.event());
                assertEquals(50, progress.data().getInteger("percent"));
                call.succeed(new JsonObject());
                List<String> rest = new ArrayList<>();
                for (SseClient.Event e : sse.untilEnd()) {
                    rest.add(name(e));
                }
                assertEquals(List.of("state:succeeded", "result", "end"), rest);
            }
        }
    }

    @Test
    void the_registry_lists_both_nodes_and_one_that_stopped_as_gone() throws Exception {
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, CONFIG, new MutableClock())) {
            String bId;
            try (TestNode b = TestNode.start(db, CONFIG, new MutableClock())) {
                bId = b.node.nodeId();
                JsonArray nodes = a.getJson("/api/nodes").getJsonArray("nodes");
                assertEquals(2, nodes.size(), nodes.encode());
                for (int i = 0; i < 2; i++) {
                    JsonObject node = nodes.getJsonObject(i);
                    assertTrue(node.getBoolean("live"));
                    assertEquals(node.getString("id").equals(a.node.nodeId()), node.getBoolean("self"));
                    assertNotNull(node.getString("version"));
                    assertTrue(node.getString("address").startsWith("http://127.0.0.1:"), node.encode());
                    assertEquals(0, node.getLong("configEpoch"));
                }
                assertEquals(
                        nodes.getJsonObject(0).getString("queuesHash"),
                        nodes.getJsonObject(1).getString("queuesHash"));
                // The first node holds the upkeep lease; the second does not.
                assertTrue(a.node.passes().cluster().holdsUpkeep());
                assertFalse(b.node.passes().cluster().holdsUpkeep());
            }
            JsonArray after = a.getJson("/api/nodes").getJsonArray("nodes");
            JsonObject gone = find(after, bId);
            assertFalse(gone.getBoolean("live"));
            assertNotNull(gone.getString("goneAt"));
            assertTrue(find(after, a.node.nodeId()).getBoolean("live"));
        }
    }

    @Test
    void the_upkeep_lease_passes_to_another_node_when_its_holder_stops() throws Exception {
        String db = TestPostgres.newDatabase();
        try (TestNode b = startSecond(db)) {
            assertFalse(b.node.passes().cluster().holdsUpkeep(), "the first node holds it");
            await(b.node.passes().cluster().runOnce());
            assertTrue(b.node.passes().cluster().holdsUpkeep(), "let go by the first node's clean stop");
        }
    }

    private static TestNode startSecond(String db) throws Exception {
        TestNode first = TestNode.start(db, CONFIG, new MutableClock());
        TestNode second;
        try {
            second = TestNode.start(db, CONFIG, new MutableClock());
        } finally {
            first.close();
        }
        return second;
    }

    @Test
    void a_node_that_defines_a_shared_queue_otherwise_refuses_to_start_unless_told_to_take_over() throws Exception {
        String db = TestPostgres.newDatabase();
        String remote = """
          {"queues": {"default": {"slots": 1, "remote": true}}, "cluster": {"fallbackMs": 3600000}}
          """;
        try (TestNode a = TestNode.start(db, CONFIG, new MutableClock())) {
            Exception refused = assertThrows(Exception.class, () -> TestNode.start(db, remote, new MutableClock()));
            Throwable cause = refused;
            while (!(cause instanceof ConfigConflictException) && cause.getCause() != null) {
                cause = cause.getCause();
            }
            assertTrue(cause instanceof ConfigConflictException, refused.toString());
            String message = cause.getMessage();
            assertTrue(message.contains("queue 'default'"), message);
            assertTrue(message.contains("kind"), message);
            assertTrue(message.contains(a.node.nodeId()), message);
            assertTrue(message.contains("--take-over-config"), message);
            assertEquals(1, a.getJson("/api/nodes").getJsonArray("nodes").size(), "the refused node left no row");

            // Slots differ per node and are no part of the definition.
            String moreSlots = CONFIG.replace("\"slots\": 1", "\"slots\": 8");
            try (TestNode wider = TestNode.start(db, moreSlots, new MutableClock())) {
                assertEquals(
                        find(a.getJson("/api/nodes").getJsonArray("nodes"), a.node.nodeId())
                                .getString("queuesHash"),
                        find(a.getJson("/api/nodes").getJsonArray("nodes"), wider.node.nodeId())
                                .getString("queuesHash"));
            }

            String takeOver =
                    remote.replace("\"fallbackMs\": 3600000", "\"fallbackMs\": 3600000, \"takeOverConfig\": true");
            try (TestNode rolled = TestNode.start(db, takeOver, new MutableClock())) {
                JsonArray nodes = a.getJson("/api/nodes").getJsonArray("nodes");
                JsonObject newer = find(nodes, rolled.node.nodeId());
                assertEquals(1, newer.getLong("configEpoch"));
                assertNotEquals(find(nodes, a.node.nodeId()).getString("queuesHash"), newer.getString("queuesHash"));
                // The newest epoch is the one to agree with now: a node of the old definition is refused.
                assertThrows(Exception.class, () -> TestNode.start(db, CONFIG, new MutableClock()));
            }
        }
    }

    @Test
    void a_node_whose_row_lapsed_joins_again_only_through_the_check_and_a_stopped_one_stays_gone() throws Exception {
        String db = TestPostgres.newDatabase();
        String remote = """
          {"queues": {"default": {"slots": 1, "remote": true}}, "cluster": {"fallbackMs": 3600000}}
          """;
        try (TestNode a = TestNode.start(db, CONFIG, new MutableClock())) {
            // a's row lapses (a stall, or the journal away for longer than three heartbeats).
            sql(
                    a,
                    db,
                    "UPDATE nodes SET expires_at = now() - interval '1 second' WHERE id = '" + a.node.nodeId() + "'");
            try (TestNode b = TestNode.start(db, remote, new MutableClock())) {
                // a heart-beats: it may not join beside a node that defines its queue otherwise.
                Exception refused = assertThrows(
                        Exception.class, () -> await(a.node.passes().cluster().runOnce()));
                assertTrue(refused.getMessage().contains("queue 'default'"), refused.getMessage());
                JsonArray nodes = b.getJson("/api/nodes").getJsonArray("nodes");
                assertFalse(find(nodes, a.node.nodeId()).getBoolean("live"), nodes.encode());
            }
            // b stopped: a joins again at its next heartbeat, and takes the lease b let go.
            await(a.node.passes().cluster().runOnce());
            JsonObject back = find(a.getJson("/api/nodes").getJsonArray("nodes"), a.node.nodeId());
            assertTrue(back.getBoolean("live"), back.encode());
            assertTrue(a.node.passes().cluster().holdsUpkeep());
            // A heartbeat after a clean stop brings nothing back.
            await(a.node.passes().cluster().leave());
            await(a.node.passes().cluster().runOnce());
            assertEquals(
                    "0",
                    sql(a, db, "SELECT count(*) FROM nodes WHERE id = '" + a.node.nodeId() + "' AND gone_at IS NULL"));
            assertEquals("0", sql(a, db, "SELECT count(*) FROM node_leases"));
        }
    }

    private static String sql(TestNode node, String db, String statement) throws Exception {
        io.vertx.sqlclient.Pool pool = io.vertx.pgclient.PgBuilder.pool()
                .connectingTo(dev.taskline.journal.PgUrl.parse(db))
                .using(node.vertx)
                .build();
        try {
            io.vertx.sqlclient.RowSet<io.vertx.sqlclient.Row> rows =
                    await(pool.query(statement).execute());
            return rows.iterator().hasNext()
                    ? String.valueOf(rows.iterator().next().getValue(0))
                    : "";
        } finally {
            await(pool.close());
        }
    }

    private static JsonObject find(JsonArray nodes, String id) {
        for (int i = 0; i < nodes.size(); i++) {
            if (nodes.getJsonObject(i).getString("id").equals(id)) {
                return nodes.getJsonObject(i);
            }
        }
        throw new AssertionError(id + " not in " + nodes.encode());
    }

    private static String name(SseClient.Event event) {
        return event.event()
                + (event.event().equals("state") ? ":" + event.data().getString("to") : "");
    }

    private static String submit(TestNode node, String type) throws Exception {
        return node.post("/api/tasks", new JsonObject().put("type", type))
                .bodyAsJsonObject()
                .getString("id");
    }
}
