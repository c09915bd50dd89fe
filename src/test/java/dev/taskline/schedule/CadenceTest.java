package dev.taskline.schedule;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * When ticks fall, daylight-saving days included. Cron follows cron-utils (9.2), and these tests
 * pin what it does, so that a change of the library's rules is seen here: on the spring-forward
 * day a local time that does not exist has no tick; on the fall-back day a daily time that occurs
 * twice fires once (its first, daylight, occurrence), while an hourly cron fires at both of the
 * repeated hour's instants. Every tick is an instant: the journal's key for it, the same on every
 * node whatever its zone.
 */
class CadenceTest {

    private static final ZoneId NEW_YORK = ZoneId.of("America/New_York");

    @Test
    void a_daily_time_that_does_not_exist_on_the_spring_forward_day_has_no_tick_that_day() {
        // 2026-03-08: clocks in New York go from 02:00 EST to 03:00 EDT; 02:30 never happens.
        Cadence cron = new Cadence.CronCadence("30 2 * * *", NEW_YORK);
        assertEquals(
                List.of("2026-03-07T07:30:00Z", "2026-03-09T06:30:00Z", "2026-03-10T06:30:00Z"),
                ticks(cron, "2026-03-07T00:00:00Z", 3));
    }

    @Test
    void a_daily_time_that_occurs_twice_on_the_fall_back_day_fires_once_at_its_first_occurrence() {
        // 2026-11-01: 01:00 to 02:00 EDT, then 01:00 to 02:00 again in EST; 01:30 comes twice.
        Cadence cron = new Cadence.CronCadence("30 1 * * *", NEW_YORK);
        assertEquals(
                List.of("2026-10-31T05:30:00Z", "2026-11-01T05:30:00Z", "2026-11-02T06:30:00Z"),
                ticks(cron, "2026-10-31T00:00:00Z", 3));
    }

    @Test
    void an_hourly_cron_skips_the_missing_hour_and_fires_at_both_repeated_ones() {
        Cadence hourly = new Cadence.CronCadence("0 * * * *", NEW_YORK);
        // Spring forward: 01:00 EST (06:00Z), then 03:00 EDT (07:00Z).
        assertEquals(List.of("2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z"), ticks(hourly, "2026-03-08T05:30:00Z", 2));
        // Fall back: 01:00 EDT (05:00Z) and 01:00 EST (06:00Z), an hour apart, each once.
        assertEquals(
                List.of("2026-11-01T05:00:00Z", "2026-11-01T06:00:00Z", "2026-11-01T07:00:00Z"),
                ticks(hourly, "2026-11-01T04:30:00Z", 3));
    }

    @Test
    void previous_agrees_with_next_on_daylight_saving_days() {
        // cron-utils' own lastExecution names the repeated 01:30 (06:30Z), which nextExecution skips.
        Cadence cron = new Cadence.CronCadence("30 1 * * *", NEW_YORK);
        assertEquals(Instant.parse("2026-11-01T05:30:00Z"), cron.previous(Instant.parse("2026-11-01T07:00:00Z")));
        assertEquals(Instant.parse("2026-11-01T05:30:00Z"), cron.previous(Instant.parse("2026-11-02T06:30:00Z")));
        Cadence spring = new Cadence.CronCadence("30 2 * * *", NEW_YORK);
        assertEquals(Instant.parse("2026-03-07T07:30:00Z"), spring.previous(Instant.parse("2026-03-09T06:30:00Z")));
        // Walking back from any instant gives the same ticks as walking forward, across both changes.
        for (Cadence c : List.of(
                cron,
                spring,
                new Cadence.CronCadence("0 * * * *", NEW_YORK),
                new Cadence.CronCadence("*/20 * * * * *", NEW_YORK))) {
            List<String> forward = ticks(c, "2026-10-31T23:00:00Z", 40);
            Instant at = Instant.parse(forward.get(forward.size() - 1)).plusMillis(1);
            List<String> backward = new ArrayList<>();
            for (int i = 0; i < forward.size(); i++) {
                at = c.previous(at);
                backward.add(0, at.toString());
            }
            assertEquals(forward, backward, "for " + c);
        }
    }

    @Test
    void six_fields_take_seconds_first() {
        Cadence cron = new Cadence.CronCadence("*/15 * * * * *", ZoneId.of("UTC"));
        assertEquals(
                List.of("2026-12-01T10:00:15Z", "2026-12-01T10:00:30Z", "2026-12-01T10:00:45Z"),
                ticks(cron, "2026-12-01T10:00:00Z", 3));
        assertThrows(IllegalArgumentException.class, () -> new Cadence.CronCadence("* * * *", ZoneId.of("UTC")));
        assertThrows(IllegalArgumentException.class, () -> new Cadence.CronCadence("0 0 1 13 *", ZoneId.of("UTC")));
    }

    @Test
    void a_cron_that_can_never_fire_has_no_next_tick() {
        assertNull(new Cadence.CronCadence("0 0 30 2 *", ZoneId.of("UTC")).next(Instant.parse("2026-12-01T00:00:00Z")));
    }

    @Test
    void an_interval_ticks_on_its_multiples_since_the_epoch_whatever_the_zone_does() {
        Cadence every = new Cadence.Every(Duration.ofHours(1));
        // Across New York's spring-forward night, exactly one hour apart.
        List<String> hours = ticks(every, "2026-03-08T05:30:00Z", 3);
        assertEquals(List.of("2026-03-08T06:00:00Z", "2026-03-08T07:00:00Z", "2026-03-08T08:00:00Z"), hours);
        Cadence seconds = new Cadence.Every(Duration.ofMillis(2500));
        assertEquals(
                Instant.parse("2026-12-01T10:00:02.500Z"), seconds.next(Instant.parse("2026-12-01T10:00:00.001Z")));
        assertEquals(Instant.parse("2026-12-01T10:00:02.500Z"), seconds.next(Instant.parse("2026-12-01T10:00:00Z")));
        assertEquals(
                Instant.parse("2026-12-01T10:00:00Z"), seconds.previous(Instant.parse("2026-12-01T10:00:02.500Z")));
        assertEquals(
                Instant.parse("2026-12-01T10:00:02.500Z"),
                seconds.previous(Instant.parse("2026-12-01T10:00:02.500000001Z")),
                "strictly before, to the nanosecond");
        assertTrue(seconds.previous(Instant.parse("2026-12-01T10:00:00Z"))
                .isBefore(Instant.parse("2026-12-01T10:00:00Z")));
    }

    private static List<String> ticks(Cadence cadence, String after, int n) {
        List<String> ticks = new ArrayList<>();
        Instant t = Instant.parse(after);
        for (int i = 0; i < n; i++) {
            t = cadence.next(t);
            ticks.add(t.toString());
        }
        return ticks;
    }
}
