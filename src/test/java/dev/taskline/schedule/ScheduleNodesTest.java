package dev.taskline.schedule;

import static dev.taskline.schedule.SchedulesApiTest.START;
import static dev.taskline.schedule.SchedulesApiTest.everySecond;
import static dev.taskline.schedule.SchedulesApiTest.later;
import static dev.taskline.schedule.SchedulesApiTest.scheduled;
import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.ExecutionException;
import org.junit.jupiter.api.Test;

/**
 * Schedules on several nodes sharing one journal and one moved clock: each tick fires once whoever
 * evaluates it; a node that comes back alone after ten ticks follows each schedule's catchUp;
 * overlap; schedules a config declares.
 */
class ScheduleNodesTest {

    private static final String CONFIG = """
      {"queues": {"default": {"slots": 4}}, "scheduler": {"graceMs": 0}}
      """;

    @Test
    void two_nodes_evaluating_every_tick_make_one_task_per_tick() throws Exception {
        MutableClock clock = new MutableClock(START);
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, CONFIG, clock);
                TestNode b = TestNode.start(db, CONFIG, clock)) {
            assertEquals(201, a.post("/api/schedules", everySecond("both")).statusCode());
            await(b.node.passes().scheduler().runOnce());
            for (int i = 0; i < 20; i++) {
                clock.advance(Duration.ofSeconds(1));
                // Both at once: each pass reads the journal and then races the other for the tick.
                Future<Void> onA = a.node.passes().scheduler().runOnce();
                Future<Void> onB = b.node.passes().scheduler().runOnce();
                await(Future.all(onA, onB));
            }
            List<JsonObject> tasks = SchedulesApiTest.scheduledTasks(a, "both", 20);
            for (int i = 0; i < 20; i++) {
                assertEquals(
                        START.plusSeconds(i + 1)
                                .truncatedTo(java.time.temporal.ChronoUnit.SECONDS)
                                .toString(),
                        tasks.get(i).getString("scheduledFor"));
            }
            double fired = fired(a, "both") + fired(b, "both");
            assertEquals(20.0, fired, "each tick fired by one node");
            double lost = lost(a, "both") + lost(b, "both");
            assertTrue(lost <= 20.0, "at most one loser a tick: " + lost);
        }
    }

    @Test
    void a_node_leaves_a_tick_to_the_node_that_ranks_above_it_and_takes_over_once_that_one_is_gone() throws Exception {
        MutableClock clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
        String db = TestPostgres.newDatabase();
        try (TestNode one = TestNode.start(db, CONFIG, clock);
                TestNode two = TestNode.start(db, CONFIG, clock)) {
            // Only the test's passes, in the order it gives.
            one.node.passes().scheduler().halt();
            two.node.passes().scheduler().halt();
            assertEquals(201, one.post("/api/schedules", everySecond("pair")).statusCode());
            UUID id = scheduleId(db, "pair");
            boolean oneFirst = Scheduler.rank(id, one.node.nodeId()) > Scheduler.rank(id, two.node.nodeId());
            TestNode p = oneFirst ? one : two; // ranks above for this schedule
            TestNode q = oneFirst ? two : one;
            await(p.node.passes().scheduler().runOnce());
            // q happens to decide 10:00:01 (p's pass comes later): p does not defer to it, q then defers to p.
            later(q, clock, Duration.ofMillis(1100));
            clock.advance(Duration.ofSeconds(1)); // 10:00:02.1
            await(p.node.passes().scheduler().runOnce());
            await(q.node.passes().scheduler().runOnce()); // reads that p decided 02
            assertEquals(List.of("01", "02"), seconds(q, "pair"));
            clock.advance(Duration.ofSeconds(1)); // 10:00:03.1: within q's wait for p
            await(q.node.passes().scheduler().runOnce(false));
            assertEquals(List.of("01", "02"), seconds(q, "pair"));
            await(p.node.passes().scheduler().runOnce());
            clock.advance(Duration.ofMillis(200)); // 10:00:03.3: q asks the journal, finds 03 decided, makes nothing
            double lostBefore = lost(q, "pair");
            await(q.node.passes().scheduler().runOnce(false));
            assertEquals(List.of("01", "02", "03"), seconds(q, "pair"));
            assertEquals(lostBefore + 1, lost(q, "pair"));
            // p is gone (its passes stopped): q decides 04 once its wait is over, then each tick at once.
            clock.advance(Duration.ofMillis(800)); // 10:00:04.1
            await(q.node.passes().scheduler().runOnce());
            assertEquals(List.of("01", "02", "03"), seconds(q, "pair"));
            later(q, clock, Duration.ofMillis(150)); // 10:00:04.25
            assertEquals(List.of("01", "02", "03", "04"), seconds(q, "pair"));
            later(q, clock, Duration.ofMillis(760)); // 10:00:05.01
            assertEquals(List.of("01", "02", "03", "04", "05"), seconds(q, "pair"));
            assertEquals(3.0, fired(q, "pair"));
        }
    }

    private static UUID scheduleId(String db, String name) throws Exception {
        io.vertx.core.Vertx vertx = io.vertx.core.Vertx.vertx();
        try {
            io.vertx.sqlclient.Pool pool = io.vertx.pgclient.PgBuilder.pool()
                    .connectingTo(dev.taskline.journal.PgUrl.parse(db))
                    .using(vertx)
                    .build();
            UUID id = await(pool.preparedQuery("SELECT id FROM schedules WHERE name = $1")
                            .execute(io.vertx.sqlclient.Tuple.of(name)))
                    .iterator()
                    .next()
                    .getUUID("id");
            await(pool.close());
            return id;
        } finally {
            await(vertx.close());
        }
    }

    @Test
    void a_node_that_reads_a_new_schedule_late_fires_its_ticks_since_it_was_made() throws Exception {
        MutableClock clock = new MutableClock(START);
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, CONFIG, clock);
                TestNode b = TestNode.start(db, CONFIG, clock)) {
            // The node that makes it is too busy to fire its first ticks (its passes halted here); the
            // other reads it five ticks in. With a grace of 0 they are overdue, yet owed: no node was away.
            await(b.node.passes().scheduler().runOnce());
            a.node.passes().scheduler().halt();
            assertEquals(201, a.post("/api/schedules", everySecond("burst")).statusCode());
            later(b, clock, Duration.ofSeconds(5));
            assertEquals(List.of("01", "02", "03", "04", "05"), seconds(b, "burst"));
            assertEquals(0, b.getJson("/api/schedules/burst").getInteger("skippedTicks"));
        }
    }

    @Test
    void a_node_back_alone_after_ten_ticks_follows_each_schedules_catch_up() throws Exception {
        MutableClock clock = new MutableClock(START);
        String db = TestPostgres.newDatabase();
        try (TestNode first = TestNode.start(db, CONFIG, clock)) {
            for (String catchUp : List.of("none", "latest", "all")) {
                assertEquals(
                        201,
                        first.post("/api/schedules", everySecond(catchUp).put("catchUp", catchUp))
                                .statusCode());
            }
            later(first, clock, Duration.ofSeconds(2));
            for (String catchUp : List.of("none", "latest", "all")) {
                SchedulesApiTest.scheduledTasks(first, catchUp, 2);
            }
        }
        // Down while ticks 10:00:03 to 10:00:12 come.
        clock.advance(Duration.ofSeconds(10));
        try (TestNode back = TestNode.start(db, CONFIG, clock)) {
            // The ticks it finds overdue wait a read of the journal a grace (here 0) and a second later,
            // in case a node that was there only lagged; nothing else decides them here.
            await(back.node.passes().scheduler().runOnce());
            assertEquals(List.of("01", "02"), seconds(back, "all"));
            later(back, clock, Duration.ofSeconds(1));
            assertEquals(List.of("01", "02", "13"), seconds(back, "none"));
            assertEquals(List.of("01", "02", "12", "13"), seconds(back, "latest"));
            assertEquals(
                    List.of("01", "02", "03", "04", "05", "06", "07", "08", "09", "10", "11", "12", "13"),
                    seconds(back, "all"));

            JsonObject none = back.getJson("/api/schedules/none");
            assertEquals(10, none.getInteger("skippedTicks"));
            JsonObject missed = none.getJsonArray("recentTicks").getJsonObject(1); // after the live tick 13
            assertEquals("2026-12-01T10:00:12Z", missed.getString("tickAt"));
            assertEquals("missed", missed.getString("reason"));
            assertEquals(10, missed.getInteger("ticks"));
            assertTrue(
                    none.getJsonObject("lastError")
                            .getString("detail")
                            .startsWith(
                                    "10 ticks from 2026-12-01T10:00:03Z to 2026-12-01T10:00:12Z came while no node evaluated"),
                    none.encode());
            assertEquals(9, back.getJson("/api/schedules/latest").getInteger("skippedTicks"));
            assertEquals(0, back.getJson("/api/schedules/all").getInteger("skippedTicks"));
            assertEquals(10.0, back.metric("taskline_schedule_ticks_total{outcome=\"skipped\",schedule=\"none\"}"));

            // And then on as usual.
            later(back, clock, Duration.ofSeconds(1));
            assertEquals("14", last(seconds(back, "none")));
            assertEquals("14", last(seconds(back, "latest")));
            assertEquals("14", last(seconds(back, "all")));
        }
    }

    @Test
    void a_node_whose_passes_stalled_over_a_minute_follows_catch_up_for_the_ticks_meanwhile() throws Exception {
        MutableClock clock = new MutableClock(START);
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            assertEquals(
                    201,
                    node.post("/api/schedules", everySecond("stalled").put("catchUp", "none"))
                            .statusCode());
            later(node, clock, Duration.ofSeconds(1));
            // Ticks a live node was late for fire, however late (here 30 s)...
            later(node, clock, Duration.ofSeconds(30));
            assertEquals(31, scheduled(node, "stalled").size());
            // ...but not after more than a minute without a pass: the node was not there. Those ticks
            // wait a read a second later (grace 0 here), then follow catchUp; the tick then is live.
            later(node, clock, Duration.ofSeconds(120));
            assertEquals(31, scheduled(node, "stalled").size());
            assertEquals(0, node.getJson("/api/schedules/stalled").getInteger("skippedTicks"));
            later(node, clock, Duration.ofSeconds(1));
            assertEquals(32, scheduled(node, "stalled").size());
            assertEquals(120, node.getJson("/api/schedules/stalled").getInteger("skippedTicks"));
        }
    }

    @Test
    void overlap_skip_skips_ticks_while_the_last_task_runs() throws Exception {
        MutableClock clock = new MutableClock(START);
        GateHandler.reset();
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            JsonObject body = new JsonObject()
                    .put("name", "slow")
                    .put("every", "PT1S")
                    .put("overlap", "skip")
                    .put("task", new JsonObject().put("type", "gate"));
            assertEquals(201, node.post("/api/schedules", body).statusCode());
            later(node, clock, Duration.ofSeconds(1));
            GateHandler.Call running = GateHandler.next(TestNode.WAIT);
            later(node, clock, Duration.ofSeconds(1));
            later(node, clock, Duration.ofSeconds(1));
            running.succeed(new JsonObject());
            node.waitForState(running.taskId().toString(), "succeeded");
            later(node, clock, Duration.ofSeconds(1));
            GateHandler.next(TestNode.WAIT).succeed(new JsonObject());
            assertEquals(List.of("01", "04"), seconds(node, "slow"));
            JsonArray ticks = node.getJson("/api/schedules/slow").getJsonArray("recentTicks");
            List<String> outcomes = new ArrayList<>();
            ticks.forEach(t -> outcomes.add(
                    ((JsonObject) t).getString("outcome") + "/" + ((JsonObject) t).getString("reason", "")));
            assertEquals(List.of("fired/", "skipped/overlap", "skipped/overlap", "fired/"), outcomes);
            assertEquals(2, node.getJson("/api/schedules/slow").getInteger("skippedTicks"));
            assertEquals(null, node.getJson("/api/schedules/slow").getValue("lastError"), "an overlap is not an error");
        }
    }

    @Test
    void a_config_declares_schedules_checked_as_the_api_checks_them() throws Exception {
        MutableClock clock = new MutableClock(START);
        String db = TestPostgres.newDatabase();
        String declared = """
        {"queues": {"default": {"slots": 4}},
         "schedules": {"nightly": {"cron": "0 3 * * *", "timezone": "Europe/Paris", "task": {"type": "sleep"}}}}
        """;
        try (TestNode node = TestNode.start(db, declared, clock)) {
            JsonObject view = node.getJson("/api/schedules/nightly");
            assertEquals("config", view.getString("origin"));
            assertEquals("2026-12-02T02:00:00Z", view.getString("nextFireAt"), "03:00 in Paris (UTC+1 in winter)");
            assertEquals(201, node.post("/api/schedules", everySecond("mine")).statusCode());
        }
        // The same declaration again changes nothing; a changed one replaces the definition.
        try (TestNode node = TestNode.start(db, declared.replace("0 3 * * *", "0 4 * * *"), clock)) {
            assertEquals("0 4 * * *", node.getJson("/api/schedules/nightly").getString("cron"));
        }
        ExecutionException bad = assertThrows(
                ExecutionException.class,
                () -> TestNode.start(db, declared.replace("\"type\": \"sleep\"", "\"type\": \"nope\""), clock)
                        .close());
        assertTrue(
                bad.getCause().getMessage().contains("schedules.nightly: task.type: unknown task type 'nope'"),
                bad.getCause().getMessage());
        ExecutionException taken = assertThrows(
                ExecutionException.class, () -> TestNode.start(db, """
        {"schedules": {"mine": {"every": "PT1M", "task": {"type": "sleep"}}}}
        """, clock).close());
        assertTrue(
                taken.getCause()
                        .getMessage()
                        .contains("schedules.mine: a schedule of that name was made through the API"),
                taken.getCause().getMessage());
    }

    private static List<String> seconds(TestNode node, String schedule) throws Exception {
        List<String> seconds = new ArrayList<>();
        for (JsonObject task : scheduled(node, schedule)) {
            String at = task.getString("scheduledFor");
            assertTrue(Instant.parse(at).getNano() == 0, at);
            seconds.add(at.substring(17, 19));
        }
        return seconds;
    }

    private static String last(List<String> list) {
        return list.get(list.size() - 1);
    }

    private static double fired(TestNode node, String schedule) throws Exception {
        return orZero(node.metric("taskline_schedule_ticks_total{outcome=\"fired\",schedule=\"" + schedule + "\"}"));
    }

    private static double lost(TestNode node, String schedule) throws Exception {
        return orZero(node.metric("taskline_schedule_ticks_total{outcome=\"lost\",schedule=\"" + schedule + "\"}"));
    }

    private static double orZero(double value) {
        return Double.isNaN(value) ? 0 : value;
    }
}
