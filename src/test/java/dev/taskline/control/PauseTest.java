package dev.taskline.control;

import static dev.taskline.testing.TestNode.await;
import static dev.taskline.testing.TestNode.queueIn;
import static dev.taskline.testing.TestNode.reasons;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Pause and resume over HTTP, against PostgreSQL: a paused queue takes tasks and starts none, on
 * every node sharing the journal and after a restart; what runs goes on, what is leased ahead goes
 * back. "Starts none" is read off the journal: the node's clock is moved on before the resume, and
 * every claim must carry a time after it.
 */
class PauseTest {

    private static final String CONFIG = """
      {"queues": {"default": {"slots": 1, "claimAhead": 4, "leaseMs": 600000, "heartbeatMs": 200000}}}
      """;

    @Test
    void a_paused_queue_takes_tasks_starts_none_and_runs_them_once_resumed() throws Exception {
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            JsonObject paused =
                    node.post("/api/queues/default/pause", new JsonObject()).bodyAsJsonObject();
            assertEquals(true, paused.getBoolean("paused"));
            assertEquals(journalTime(clock).toString(), paused.getString("changedAt"));
            assertNull(paused.getString("changedBy"), "auth is off: no key asked");
            JsonObject queue = queueIn(node.getJson("/api/queues"), "default");
            assertEquals(true, queue.getBoolean("paused"));
            assertEquals(journalTime(clock).toString(), queue.getString("pausedAt"));
            assertEquals(1.0, node.metric("taskline_queue_paused{queue=\"default\"}"));
            assertEquals(
                    paused.getString("changedAt"),
                    node.post("/api/queues/default/pause", new JsonObject())
                            .bodyAsJsonObject()
                            .getString("changedAt"),
                    "pausing a paused queue changes nothing");

            List<String> ids = new ArrayList<>();
            for (int i = 0; i < 3; i++) {
                ids.add(node.post("/api/tasks", new JsonObject().put("type", "sleep"))
                        .bodyAsJsonObject()
                        .getString("id"));
            }
            // Had anything started, the three would not all be waiting.
            node.until("/api/queues", q -> queueIn(q, "default").getInteger("waiting") == 3);
            for (String id : ids) {
                JsonObject task = node.getJson("/api/tasks/" + id);
                assertEquals("pending", task.getString("state"));
                assertEquals(List.of("submitted"), reasons(task));
            }

            clock.advance(Duration.ofMinutes(1));
            Instant resumedAt = journalTime(clock);
            JsonObject resumed =
                    node.post("/api/queues/default/resume", new JsonObject()).bodyAsJsonObject();
            assertEquals(false, resumed.getBoolean("paused"));
            for (String id : ids) {
                JsonObject task = node.waitForState(id, "succeeded");
                assertFalse(claimedAt(task).isBefore(resumedAt), "claimed while paused: " + task.encode());
            }
            JsonObject after = queueIn(node.getJson("/api/queues"), "default");
            assertEquals(false, after.getBoolean("paused"));
            assertFalse(after.containsKey("pausedAt"));
            assertEquals(0.0, node.metric("taskline_queue_paused{queue=\"default\"}"));
        }
    }

    @Test
    void a_pause_lets_the_running_task_finish_and_hands_back_those_claimed_ahead() throws Exception {
        GateHandler.reset();
        MutableClock clock = new MutableClock();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            warmUp(node);
            String running = submit(node, "gate");
            GateHandler.Call call = GateHandler.next(TestNode.WAIT);
            String ahead = submit(node, "gate");
            assertEquals(
                    List.of("submitted", "claimed"),
                    reasons(node.waitForState(ahead, "running")),
                    "leased while the only slot is busy");

            node.post("/api/queues/default/pause", new JsonObject());
            JsonObject handedBack = node.waitForState(ahead, "pending");
            assertEquals(List.of("submitted", "claimed", "released"), reasons(handedBack));
            assertEquals(0, handedBack.getInteger("attempt"), "its attempt is given back");
            call.succeed(new JsonObject());
            node.waitForState(running, "succeeded");
            // The slot is free and the task waits here, in line for the resume.
            node.until("/api/queues", q -> {
                JsonObject queue = queueIn(q, "default");
                return queue.getInteger("running") == 0
                        && queue.getInteger("finishing") == 0
                        && queue.getInteger("waiting") == 1
                        && queue.getInteger("claimedAhead") == 0;
            });

            clock.advance(Duration.ofMinutes(1));
            Instant resumedAt = journalTime(clock);
            node.post("/api/queues/default/resume", new JsonObject());
            GateHandler.Call again = GateHandler.next(TestNode.WAIT);
            assertEquals(ahead, again.taskId().toString());
            again.succeed(new JsonObject());
            JsonObject done = node.waitForState(ahead, "succeeded");
            assertEquals(List.of("submitted", "claimed", "released", "claimed", "succeeded"), reasons(done));
            assertFalse(claimedAt(done).isBefore(resumedAt), "claimed again while paused: " + done.encode());
        }
    }

    @Test
    void a_pause_holds_on_every_node_of_the_journal_and_across_a_restart() throws Exception {
        String db = TestPostgres.newDatabase();
        MutableClock clock = new MutableClock();
        List<String> ids = new ArrayList<>();
        try (TestNode a = TestNode.start(db, CONFIG, clock)) {
            try (TestNode b = TestNode.start(db, CONFIG, clock)) {
                a.post("/api/queues/default/pause", new JsonObject());
                // Node b learns of it from the journal: its timer would read it within a second; the test reads it now.
                await(b.node.passes().pauses().runOnce());
                assertEquals(true, queueIn(b.getJson("/api/queues"), "default").getBoolean("paused"));
                for (int i = 0; i < 2; i++) {
                    ids.add(b.post("/api/tasks", new JsonObject().put("type", "sleep"))
                            .bodyAsJsonObject()
                            .getString("id"));
                }
                b.until("/api/queues", q -> queueIn(q, "default").getInteger("waiting") == 2);
            }
            // A node that starts on a paused journal starts paused: the tasks it pages in wait.
            try (TestNode restarted = TestNode.start(db, CONFIG, clock)) {
                assertEquals(
                        true,
                        queueIn(restarted.getJson("/api/queues"), "default").getBoolean("paused"));
                await(restarted.node.passes().recovery().runOnce());
                restarted.until("/api/queues", q -> queueIn(q, "default").getInteger("waiting") == 2);
                for (String id : ids) {
                    assertEquals(List.of("submitted"), reasons(restarted.getJson("/api/tasks/" + id)));
                }
                clock.advance(Duration.ofMinutes(1));
                Instant resumedAt = journalTime(clock);
                restarted.post("/api/queues/default/resume", new JsonObject());
                for (String id : ids) {
                    assertFalse(
                            claimedAt(restarted.waitForState(id, "succeeded")).isBefore(resumedAt));
                }
                await(a.node.passes().pauses().runOnce());
                assertEquals(false, queueIn(a.getJson("/api/queues"), "default").getBoolean("paused"));
            }
        }
    }

    @Test
    void a_remote_worker_waiting_on_a_paused_queue_gets_its_task_only_once_resumed() throws Exception {
        MutableClock clock = new MutableClock();
        String config = """
        {"queues": {"remote": {"remote": true, "slots": 2, "leaseMs": 600000, "heartbeatMs": 200000}}}
        """;
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), config, clock)) {
            node.post("/api/queues/remote/pause", new JsonObject());
            var claim = node.http
                    .post("/api/queues/remote/claim")
                    .putHeader("Content-Type", "application/json")
                    .sendBuffer(Buffer.buffer(new JsonObject()
                            .put("worker", "w1")
                            .put("max", 1)
                            .put("waitMs", 60_000)
                            .encode()));
            node.until(
                    () -> await(node.node.passes().remote().waiting("remote")) == 1, () -> "the claim is not waiting");
            String id = node.post(
                            "/api/tasks", new JsonObject().put("type", "resize").put("queue", "remote"))
                    .bodyAsJsonObject()
                    .getString("id");
            // Had the waiting claim been given it, it would be running, not waiting.
            node.until("/api/queues", q -> queueIn(q, "remote").getInteger("waiting") == 1);
            assertFalse(claim.isComplete());

            clock.advance(Duration.ofMinutes(1));
            Instant resumedAt = journalTime(clock);
            node.post("/api/queues/remote/resume", new JsonObject());
            JsonArray tasks = await(claim).bodyAsJsonObject().getJsonArray("tasks");
            assertEquals(1, tasks.size());
            assertEquals(id, tasks.getJsonObject(0).getString("id"));
            assertFalse(claimedAt(node.getJson("/api/tasks/" + id)).isBefore(resumedAt));
        }
    }

    @Test
    void pausing_a_queue_this_node_does_not_have_is_not_found_and_changes_nothing() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG)) {
            var answer = node.post("/api/queues/nope/pause", new JsonObject());
            assertEquals(404, answer.statusCode());
            assertEquals("application/problem+json", answer.getHeader("Content-Type"));
            assertTrue(answer.bodyAsJsonObject().getString("detail").contains("nope"));
            await(node.node.passes().pauses().runOnce());
            assertEquals(false, node.node.passes().pauses().control("nope").paused());
        }
    }

    /** The node's time as the journal keeps it (PostgreSQL's timestamps hold microseconds). */
    private static Instant journalTime(MutableClock clock) {
        return clock.instant().truncatedTo(ChronoUnit.MICROS);
    }

    /** When the task was last claimed, by the journal's own time. */
    private static Instant claimedAt(JsonObject task) {
        JsonArray history = task.getJsonArray("history");
        Instant last = null;
        for (Object e : history) {
            JsonObject event = (JsonObject) e;
            if ("claimed".equals(event.getString("reason"))) {
                last = Instant.parse(event.getString("at"));
            }
        }
        if (last == null) {
            throw new AssertionError("never claimed: " + task.encode());
        }
        return last;
    }

    /** No-op tasks teach the worker that handlers are short, so that it claims ahead. */
    private static void warmUp(TestNode node) throws Exception {
        for (int i = 0; i < 5; i++) {
            node.waitForState(submit(node, "sleep"), "succeeded");
        }
    }

    private static String submit(TestNode node, String type) throws Exception {
        return node.post("/api/tasks", new JsonObject().put("type", type))
                .bodyAsJsonObject()
                .getString("id");
    }
}
