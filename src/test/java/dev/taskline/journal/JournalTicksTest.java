package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.model.TickWrite;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The journal's one-task-per-tick guarantee, against a real PostgreSQL: two nodes deciding the
 * same ticks, one after the other or at once, make one task each, and the loser's write changes
 * nothing; no tick is decided after a pause or a delete; overlap is judged by the last task's state.
 */
class JournalTicksTest {

    private static Vertx vertx;
    private static Pool pool;
    private MutableClock clock;
    private Journal journal;
    private JournalSchedules schedules;

    @BeforeAll
    static void start() throws Exception {
        vertx = Vertx.vertx();
        pool = TestPostgres.journalPool(vertx);
    }

    @BeforeEach
    void newClock() {
        clock = new MutableClock();
        journal = new Journal(pool, clock);
        schedules = new JournalSchedules(journal);
    }

    @AfterAll
    static void stop() throws Exception {
        await(pool.close());
        await(vertx.close());
    }

    private UUID schedule() throws Exception {
        UUID id = UUID.randomUUID();
        assertTrue(await(schedules.create(id, "s-" + id, new JsonObject().put("every", "PT1S"), null)));
        return id;
    }

    private TickWrite fire(UUID schedule, Instant tick, boolean skipIfRunning) {
        Task task = Task.builder(TaskIds.next(clock), "q-" + schedule, "sleep")
                .runAt(clock.instant())
                .scheduled("s-" + schedule, tick)
                .build();
        return TickWrite.fire(schedule, tick, Insert.waiting(task, clock.instant(), null), skipIfRunning);
    }

    private static List<TickWrite.Outcome> outcomes(List<TickWrite.Decision> decisions) {
        return decisions.stream().map(TickWrite.Decision::outcome).toList();
    }

    @Test
    void two_nodes_deciding_the_same_ticks_make_one_task_each_and_the_second_changes_nothing() throws Exception {
        UUID s = schedule();
        Instant t1 = Instant.parse("2026-12-01T10:00:01Z");
        Instant t2 = Instant.parse("2026-12-01T10:00:02Z");
        List<TickWrite.Decision> first = await(schedules.decide(List.of(fire(s, t1, false), fire(s, t2, false)), "a"));
        assertEquals(List.of(TickWrite.Outcome.FIRED, TickWrite.Outcome.FIRED), outcomes(first));
        List<TickWrite.Decision> second = await(
                schedules.decide(List.of(fire(s, t1, false), TickWrite.skip(s, t2, "queue-full", "full", 1)), "b"));
        assertEquals(List.of(TickWrite.Outcome.LOST, TickWrite.Outcome.LOST), outcomes(second));
        assertEquals(List.of(t1 + " 1 a", t2 + " 1 a"), tasksPerTick(s));
    }

    @Test
    void many_nodes_racing_for_the_same_ticks_at_once_make_one_task_per_tick() throws Exception {
        List<UUID> ids = new ArrayList<>();
        for (int i = 0; i < 5; i++) {
            ids.add(schedule());
        }
        Instant tick = Instant.parse("2026-12-01T10:00:01Z");
        List<Future<List<TickWrite.Decision>>> racing = new ArrayList<>();
        for (int node = 0; node < 4; node++) {
            List<TickWrite> writes = new ArrayList<>();
            // Each node lists the schedules in its own order: the statement sorts its rows, so they never deadlock.
            for (int i = 0; i < ids.size(); i++) {
                writes.add(fire(ids.get((i + node) % ids.size()), tick, false));
            }
            racing.add(schedules.decide(writes, "node-" + node));
        }
        int fired = 0;
        for (Future<List<TickWrite.Decision>> f : racing) {
            for (TickWrite.Decision d : await(f)) {
                fired += d.outcome() == TickWrite.Outcome.FIRED ? 1 : 0;
                assertTrue(
                        d.outcome() == TickWrite.Outcome.FIRED || d.outcome() == TickWrite.Outcome.LOST, d.toString());
            }
        }
        assertEquals(ids.size(), fired);
        for (UUID id : ids) {
            List<String> perTick = tasksPerTick(id);
            assertEquals(1, perTick.size(), perTick.toString());
            assertTrue(perTick.get(0).startsWith(tick + " 1 "), perTick.toString());
        }
    }

    @Test
    void no_tick_is_decided_for_a_paused_or_deleted_schedule() throws Exception {
        UUID paused = schedule();
        UUID deleted = schedule();
        assertTrue(await(schedules.setPaused("s-" + paused, true, null)));
        assertTrue(await(schedules.delete("s-" + deleted)));
        Instant tick = Instant.parse("2026-12-01T10:00:01Z");
        List<TickWrite.Decision> decisions = await(schedules.decide(
                List.of(
                        fire(paused, tick, false),
                        fire(deleted, tick, false),
                        TickWrite.skip(paused, tick.plusSeconds(1), "missed", "x", 3)),
                "a"));
        assertEquals(
                List.of(TickWrite.Outcome.GONE, TickWrite.Outcome.GONE, TickWrite.Outcome.GONE), outcomes(decisions));
        assertEquals(List.of(), tasksPerTick(paused));
        assertEquals(List.of(), tasksPerTick(deleted));
        assertTrue(await(schedules.setPaused("s-" + paused, false, null)));
        assertEquals(
                List.of(TickWrite.Outcome.FIRED),
                outcomes(await(schedules.decide(List.of(fire(paused, tick, false)), "a"))));
    }

    @Test
    void overlap_skip_skips_a_tick_while_the_last_task_is_unfinished_and_records_why() throws Exception {
        UUID s = schedule();
        Instant t1 = Instant.parse("2026-12-01T10:00:01Z");
        Instant t2 = Instant.parse("2026-12-01T10:00:02Z");
        Instant t3 = Instant.parse("2026-12-01T10:00:03Z");
        TickWrite first = fire(s, t1, true);
        assertEquals(List.of(TickWrite.Outcome.FIRED), outcomes(await(schedules.decide(List.of(first), "a"))));
        List<TickWrite.Decision> second = await(schedules.decide(List.of(fire(s, t2, true)), "a"));
        assertEquals(TickWrite.Outcome.SKIPPED, second.get(0).outcome());
        assertEquals("overlap", second.get(0).reason());
        // A schedule that allows overlap fires anyway.
        assertEquals(
                TickWrite.Outcome.FIRED,
                await(schedules.decide(List.of(fire(s, t3, false)), "a")).get(0).outcome());
        await(pool.preparedQuery("UPDATE tasks SET state = 'succeeded', finished_at = now() WHERE schedule = $1")
                .execute(Tuple.of("s-" + s)));
        Instant t4 = Instant.parse("2026-12-01T10:00:04Z");
        assertEquals(
                TickWrite.Outcome.FIRED,
                await(schedules.decide(List.of(fire(s, t4, true)), "a")).get(0).outcome());
        Row skipped = await(
                        pool.preparedQuery("SELECT reason, detail, task_id FROM schedule_ticks WHERE schedule_id = $1"
                                        + " AND tick_at = $2")
                                .execute(Tuple.of(s, t2.atOffset(java.time.ZoneOffset.UTC))))
                .iterator()
                .next();
        assertEquals("overlap", skipped.getString("reason"));
        assertTrue(
                skipped.getString("detail").contains(first.task().task().id().toString() + ") was pending"),
                skipped.getString("detail"));
    }

    /** "tick count decider" per tick of the schedule's tasks, in tick order. */
    private List<String> tasksPerTick(UUID schedule) throws Exception {
        List<String> rows = new ArrayList<>();
        for (Row row : await(pool.preparedQuery("SELECT t.scheduled_for, count(*) AS n, min(st.decided_by) AS by"
                        + " FROM tasks t LEFT JOIN schedule_ticks st ON st.task_id = t.id WHERE t.schedule = $1"
                        + " GROUP BY t.scheduled_for ORDER BY t.scheduled_for")
                .execute(Tuple.of("s-" + schedule)))) {
            rows.add(row.getOffsetDateTime("scheduled_for").toInstant() + " " + row.getLong("n") + " "
                    + row.getString("by"));
        }
        return rows;
    }
}
