package dev.taskline.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;
import org.junit.jupiter.api.Test;

/** Which ticks a pass fires and which it records missed: catchUp, overlap, chunks, live ticks. */
class TickPlanTest {

    private static final Instant T = Instant.parse("2026-12-01T10:00:00Z");

    private static ScheduleSpec spec(String catchUp, String overlap, String cadence) {
        JsonObject json = new JsonObject()
                .put("name", "s")
                .put("task", new JsonObject().put("type", "sleep"))
                .put("catchUp", catchUp)
                .put("overlap", overlap);
        json.put(cadence.startsWith("P") ? "every" : "cron", cadence);
        return ScheduleSpec.parse(json, null);
    }

    private static Instant at(int seconds) {
        return T.plusSeconds(seconds);
    }

    @Test
    void live_ticks_all_fire_however_late_the_pass_is() {
        TickPlan plan = TickPlan.of(spec("none", "allow", "PT1S"), at(0), null, at(3).plusMillis(400), 1000, 100);
        assertEquals(List.of(at(1), at(2), at(3)), plan.fire());
        assertNull(plan.missed());
        assertTrue(TickPlan.of(spec("none", "allow", "PT1S"), at(3), null, at(3).plusMillis(999), 1000, 100)
                .isEmpty());
    }

    @Test
    void catch_up_none_records_the_past_ticks_missed_and_fires_the_live_ones() {
        // Taken up at 10:00:10.5 with a grace of 1 s: ticks to 10:00:09.5 are past, 10 is live.
        TickPlan plan = TickPlan.of(
                spec("none", "allow", "PT1S"), at(0), at(9).plusMillis(500), at(10).plusMillis(500), 1000, 100);
        assertEquals(List.of(at(10)), plan.fire());
        assertEquals(at(9), plan.missed());
        assertEquals(at(1), plan.missedFirst());
        assertEquals(9, plan.missedCount());
    }

    @Test
    void catch_up_latest_fires_the_newest_past_tick_and_records_the_older_missed() {
        TickPlan plan = TickPlan.of(spec("latest", "allow", "PT1S"), at(0), at(10), at(10), 1000, 100);
        assertEquals(List.of(at(10)), plan.fire());
        assertEquals(at(9), plan.missed());
        assertEquals(9, plan.missedCount());
        TickPlan one = TickPlan.of(spec("latest", "allow", "PT1S"), at(0), at(1), at(1), 1000, 100);
        assertEquals(List.of(at(1)), one.fire());
        assertNull(one.missed(), "a single past tick is the latest: nothing missed");
    }

    @Test
    void catch_up_all_fires_every_past_tick_oldest_first_up_to_max_catch_up_and_in_chunks() {
        TickPlan all = TickPlan.of(spec("all", "allow", "PT1S"), at(0), at(10), at(10), 1000, 100);
        assertEquals(10, all.fire().size());
        assertEquals(at(1), all.fire().get(0));
        assertNull(all.missed());
        TickPlan capped = TickPlan.of(spec("all", "allow", "PT1S"), at(0), at(10), at(10), 4, 100);
        assertEquals(List.of(at(7), at(8), at(9), at(10)), capped.fire());
        assertEquals(at(6), capped.missed());
        assertEquals(6, capped.missedCount());
        TickPlan chunk = TickPlan.of(spec("all", "allow", "PT1S"), at(0), at(10), at(12), 1000, 3);
        assertEquals(List.of(at(1), at(2), at(3)), chunk.fire(), "a chunk a pass; the next pass goes on");
        TickPlan rest = TickPlan.of(spec("all", "allow", "PT1S"), at(3), at(10), at(12), 1000, 100);
        assertEquals(List.of(at(4), at(5), at(6), at(7), at(8), at(9), at(10), at(11), at(12)), rest.fire());
        assertNull(rest.missed(), "nothing is recorded missed twice");
    }

    @Test
    void overlap_skip_decides_one_tick_a_pass() {
        TickPlan plan = TickPlan.of(spec("all", "skip", "PT1S"), at(0), at(10), at(10), 1000, 100);
        assertEquals(List.of(at(1)), plan.fire());
        TickPlan live = TickPlan.of(spec("none", "skip", "PT1S"), at(0), null, at(5), 1000, 100);
        assertEquals(List.of(at(1)), live.fire());
    }

    @Test
    void a_long_gap_of_a_cron_counts_its_missed_ticks_up_to_a_cap() {
        // Every second by cron, for two days: more than the count's cap, recorded as "at least".
        ScheduleSpec spec = spec("none", "allow", "* * * * * *");
        TickPlan plan = TickPlan.of(spec, at(0), at(2 * 86_400), at(2 * 86_400), 1000, 100);
        assertEquals(TickPlan.COUNT_CAP, plan.missedCount());
        assertTrue(plan.countCapped());
        assertEquals(at(2 * 86_400), plan.missed());
        // An interval counts exactly, however long.
        TickPlan every = TickPlan.of(spec("none", "allow", "PT1S"), at(0), at(2 * 86_400), at(2 * 86_400), 1000, 100);
        assertEquals(2 * 86_400, every.missedCount());
        assertTrue(!every.countCapped());
    }
}
