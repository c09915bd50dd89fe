package dev.taskline.schedule;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * Schedules over HTTP against PostgreSQL, on a clock the test moves: what a tick makes, what the
 * API shows of it, pause, resume and delete, and every bad definition refused with nothing made.
 * The scheduler's pass is run by hand after each move ({@code runOnce}); its own timer runs too,
 * and either may decide a tick: the journal's key lets only one.
 */
class SchedulesApiTest {

    static final Instant START = Instant.parse("2026-12-01T10:00:00.250Z");
    private static final String CONFIG = """
      {"queues": {"default": {"slots": 4}, "small": {"slots": 1, "capacity": 1}}}
      """;

    static JsonObject everySecond(String name) {
        return new JsonObject()
                .put("name", name)
                .put("every", "PT1S")
                .put("task", new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 0)));
    }

    @Test
    void a_schedule_every_second_makes_one_task_per_tick_and_shows_them() throws Exception {
        MutableClock clock = new MutableClock(START);
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            HttpResponse<Buffer> made = node.post("/api/schedules", everySecond("heartbeat"));
            assertEquals(201, made.statusCode(), made.bodyAsString());
            assertEquals("/api/schedules/heartbeat", made.getHeader("Location"));
            JsonObject view = made.bodyAsJsonObject();
            assertEquals("PT1S", view.getString("every"));
            assertNull(view.getValue("timezone"), "every counts from the epoch in UTC: no zone to show");
            assertEquals("allow", view.getString("overlap"));
            assertEquals("latest", view.getString("catchUp"));
            assertEquals(false, view.getBoolean("paused"));
            assertEquals("api", view.getString("origin"));
            assertEquals(
                    List.of(
                            "2026-12-01T10:00:01Z",
                            "2026-12-01T10:00:02Z",
                            "2026-12-01T10:00:03Z",
                            "2026-12-01T10:00:04Z",
                            "2026-12-01T10:00:05Z"),
                    view.getJsonArray("nextFireTimes").getList());
            assertEquals("2026-12-01T10:00:01Z", view.getString("nextFireAt"));
            assertNull(view.getValue("lastTick"));

            later(node, clock, Duration.ofSeconds(3));
            List<JsonObject> tasks = scheduledTasks(node, "heartbeat", 3);
            List<String> ticks = new ArrayList<>();
            for (JsonObject task : tasks) {
                ticks.add(task.getString("scheduledFor"));
                assertEquals("heartbeat", task.getString("schedule"));
                node.waitForState(task.getString("id"), "succeeded");
            }
            assertEquals(List.of("2026-12-01T10:00:01Z", "2026-12-01T10:00:02Z", "2026-12-01T10:00:03Z"), ticks);

            JsonObject one = node.getJson("/api/schedules/heartbeat");
            JsonArray recent = one.getJsonArray("recentTicks");
            assertEquals(3, recent.size());
            assertEquals("2026-12-01T10:00:03Z", recent.getJsonObject(0).getString("tickAt"), "newest first");
            for (int i = 0; i < 3; i++) {
                JsonObject tick = recent.getJsonObject(i);
                assertEquals("fired", tick.getString("outcome"));
                assertEquals(tasks.get(2 - i).getString("id"), tick.getString("taskId"));
                assertEquals("succeeded", tick.getString("taskState"));
                assertEquals(node.node.nodeId(), tick.getString("decidedBy"));
            }
            assertEquals("fired", one.getJsonObject("lastTick").getString("outcome"));
            assertEquals("2026-12-01T10:00:04Z", one.getString("nextFireAt"));
            assertEquals(0, one.getInteger("skippedTicks"));
            assertEquals(3.0, node.metric("taskline_schedule_ticks_total{outcome=\"fired\",schedule=\"heartbeat\"}"));

            JsonArray list = node.getJson("/api/schedules").getJsonArray("schedules");
            assertEquals(1, list.size());
            assertTrue(!list.getJsonObject(0).containsKey("recentTicks"), "lists leave the ticks out");
        }
    }

    @Test
    void a_paused_schedule_fires_nothing_and_owes_nothing_when_resumed_and_a_deleted_one_fires_no_more()
            throws Exception {
        MutableClock clock = new MutableClock(START);
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            assertEquals(
                    201,
                    node.post("/api/schedules", everySecond("paused").put("catchUp", "all"))
                            .statusCode());
            later(node, clock, Duration.ofSeconds(1));
            scheduledTasks(node, "paused", 1);

            JsonObject paused =
                    node.post("/api/schedules/paused/pause", new JsonObject()).bodyAsJsonObject();
            assertEquals(true, paused.getBoolean("paused"));
            assertNull(paused.getValue("nextFireAt"));
            later(node, clock, Duration.ofSeconds(5));
            JsonObject resumed =
                    node.post("/api/schedules/paused/resume", new JsonObject()).bodyAsJsonObject();
            assertEquals(false, resumed.getBoolean("paused"));
            later(node, clock, Duration.ofSeconds(2));
            List<String> ticks = scheduledTasks(node, "paused", 3).stream()
                    .map(t -> t.getString("scheduledFor"))
                    .toList();
            // 10:00:01 before the pause; 02 to 06 came while it was paused (catchUp all does not owe them);
            // 07 and 08 after the resume at 06.25.
            assertEquals(List.of("2026-12-01T10:00:01Z", "2026-12-01T10:00:07Z", "2026-12-01T10:00:08Z"), ticks);

            assertEquals(
                    204, await(node.http.delete("/api/schedules/paused").send()).statusCode());
            later(node, clock, Duration.ofSeconds(5));
            assertEquals(3, scheduled(node, "paused").size(), "nothing after the delete");
            assertEquals(404, node.get("/api/schedules/paused").statusCode());
            assertEquals(
                    404, await(node.http.delete("/api/schedules/paused").send()).statusCode());
            assertEquals(
                    404,
                    node.post("/api/schedules/paused/pause", new JsonObject()).statusCode());
        }
    }

    @Test
    void bad_definitions_are_refused_naming_the_field_and_make_nothing() throws Exception {
        MutableClock clock = new MutableClock(START);
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            assertEquals(201, node.post("/api/schedules", everySecond("taken")).statusCode());
            refused(node, everySecond("taken"), 409, "schedule-exists", "exists already");
            refused(node, everySecond("x").put("every", "soon"), 422, "invalid-schedule", "every: 'soon'");
            refused(node, everySecond("x").put("every", "PT0.5S"), 422, "invalid-schedule", "at least one second");
            refused(node, everySecond("x").put("every", "P1M"), 422, "invalid-schedule", "every: 'P1M'");
            refused(node, cron("x", "61 * * * *"), 422, "invalid-schedule", "cron: '61 * * * *'");
            refused(node, cron("x", "* * *"), 422, "invalid-schedule", "5 fields");
            refused(node, cron("x", "0 0 30 2 *"), 422, "invalid-schedule", "never fires");
            refused(
                    node,
                    cron("x", "0 0 * * *").put("timezone", "Mars/Olympus"),
                    422,
                    "invalid-schedule",
                    "timezone: 'Mars/Olympus'");
            refused(node, cron("x", "0 0 * * *").put("every", "PT1S"), 422, "invalid-schedule", "cron or every");
            refused(
                    node,
                    everySecond("x").put("timezone", "Europe/Paris"),
                    422,
                    "invalid-schedule",
                    "timezone applies to cron only");
            refused(
                    node,
                    everySecond("x").put("task", new JsonObject().put("type", "nope")),
                    422,
                    "invalid-schedule",
                    "task.type: unknown task type 'nope'");
            refused(
                    node,
                    everySecond("x")
                            .put("task", new JsonObject().put("type", "sleep").put("queue", "nope")),
                    422,
                    "invalid-schedule",
                    "task.queue: unknown queue 'nope'");
            refused(
                    node,
                    everySecond("x")
                            .put("task", new JsonObject().put("type", "sleep").put("priority", 5000)),
                    422,
                    "invalid-schedule",
                    "task.priority");
            refused(
                    node,
                    everySecond("x")
                            .put("task", new JsonObject().put("type", "sleep").put("delayMs", 5)),
                    422,
                    "invalid-schedule",
                    "task.delayMs cannot be given");
            refused(
                    node,
                    everySecond("x")
                            .put("task", new JsonObject().put("type", "sleep").put("prority", 5)),
                    422,
                    "invalid-schedule",
                    "task.prority is not a known field");
            refused(
                    node,
                    everySecond("x").put("overlap", "sometimes"),
                    422,
                    "invalid-schedule",
                    "overlap must be one of");
            refused(node, everySecond("x").put("catchUp", true), 422, "invalid-schedule", "catchUp must be one of");
            refused(node, everySecond("no spaces"), 422, "invalid-schedule", "name must be");
            refused(node, everySecond("x").put("when", "now"), 422, "invalid-schedule", "when is not a known field");
            assertEquals(
                    1, node.getJson("/api/schedules").getJsonArray("schedules").size(), "only the first was made");
            later(node, clock, Duration.ofSeconds(2));
            assertEquals(2, scheduled(node, "taken").size());
        }
    }

    @Test
    void a_tick_the_queue_has_no_room_for_is_skipped_and_recorded_never_retried() throws Exception {
        MutableClock clock = new MutableClock(START);
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), CONFIG, clock)) {
            // One slot and room for one waiting: the gate holds the first tick's task running, the
            // second's waits, and the third finds no room.
            JsonObject gate = new JsonObject()
                    .put("name", "full")
                    .put("every", "PT1S")
                    .put("task", new JsonObject().put("type", "gate").put("queue", "small"));
            GateHandler.reset();
            assertEquals(201, node.post("/api/schedules", gate).statusCode());
            later(node, clock, Duration.ofSeconds(1));
            GateHandler.Call running = GateHandler.next(TestNode.WAIT);
            later(node, clock, Duration.ofSeconds(1));
            later(node, clock, Duration.ofSeconds(1));
            JsonObject view = node.getJson("/api/schedules/full");
            assertEquals(1, view.getInteger("skippedTicks"), view.encodePrettily());
            JsonObject error = view.getJsonObject("lastError");
            assertEquals("2026-12-01T10:00:03Z", error.getString("tickAt"));
            assertTrue(error.getString("detail").contains("queue 'small' is full"), error.encode());
            JsonObject last = view.getJsonArray("recentTicks").getJsonObject(0);
            assertEquals("skipped", last.getString("outcome"));
            assertEquals("queue-full", last.getString("reason"));
            running.succeed(new JsonObject());
            GateHandler.next(TestNode.WAIT).succeed(new JsonObject());
            await(node.node.passes().scheduler().runOnce());
            assertEquals(2, scheduled(node, "full").size(), "the skipped tick is not tried again");
            assertEquals(1.0, node.metric("taskline_schedule_ticks_total{outcome=\"skipped\",schedule=\"full\"}"));
        }
    }

    /** Moves the clock on by {@code by} and runs the node's scheduler pass, as its timer would when the time came. */
    static void later(TestNode node, MutableClock clock, Duration by) throws Exception {
        clock.advance(by);
        await(node.node.passes().scheduler().runOnce());
    }

    private static JsonObject cron(String name, String cron) {
        return everySecond(name).put("cron", cron).putNull("every");
    }

    private static void refused(TestNode node, JsonObject body, int status, String type, String detail)
            throws Exception {
        body = new JsonObject(body.getMap().entrySet().stream()
                .filter(e -> e.getValue() != null)
                .collect(
                        java.util.stream.Collectors.toMap(java.util.Map.Entry::getKey, java.util.Map.Entry::getValue)));
        HttpResponse<Buffer> answer = node.post("/api/schedules", body);
        assertEquals(status, answer.statusCode(), answer.bodyAsString());
        JsonObject problem = answer.bodyAsJsonObject();
        assertTrue(problem.getString("type").endsWith(":" + type), problem.encode());
        assertTrue(problem.getString("detail").contains(detail), "'" + detail + "' not in " + problem.encode());
    }

    /** The tasks schedule {@code name} made, oldest tick first, once there are {@code n}. */
    static List<JsonObject> scheduledTasks(TestNode node, String name, int n) throws Exception {
        node.until(() -> scheduled(node, name).size() >= n, () -> "waiting for " + n + " tasks of " + name);
        List<JsonObject> tasks = scheduled(node, name);
        assertEquals(n, tasks.size(), tasks.toString());
        return tasks;
    }

    /** Every task of schedule {@code name}, oldest tick first (a page of the task list, filtered). */
    static List<JsonObject> scheduled(TestNode node, String name) throws Exception {
        JsonArray page = node.getJson("/api/tasks?limit=1000").getJsonArray("tasks");
        List<JsonObject> tasks = new ArrayList<>();
        for (Object o : page) {
            JsonObject task = (JsonObject) o;
            if (name.equals(task.getString("schedule"))) {
                tasks.add(task);
            }
        }
        tasks.sort(java.util.Comparator.comparing(t -> t.getString("scheduledFor")));
        return tasks;
    }
}
