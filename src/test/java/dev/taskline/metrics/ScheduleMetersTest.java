package dev.taskline.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import io.micrometer.core.instrument.simple.SimpleMeterRegistry;
import java.util.Set;
import org.junit.jupiter.api.Test;

/** A schedule's meters go with it: making and deleting schedules in a loop leaves nothing behind. */
class ScheduleMetersTest {

    @Test
    void the_meters_of_schedules_that_are_gone_are_dropped() {
        SimpleMeterRegistry registry = new SimpleMeterRegistry();
        ScheduleMeters meters = new ScheduleMeters(registry);
        for (int i = 0; i < 100; i++) {
            meters.fired("s" + i);
            meters.lost("s" + i);
        }
        meters.fired("kept");
        meters.keepOnly(Set.of("kept"));
        assertEquals(1, meters.held());
        assertNull(
                registry.find("taskline_schedule_ticks").tag("schedule", "s7").counter());
        assertNotNull(
                registry.find("taskline_schedule_ticks").tag("schedule", "kept").counter());
        meters.fired("kept");
        assertEquals(
                2.0,
                registry.find("taskline_schedule_ticks")
                        .tag("schedule", "kept")
                        .counter()
                        .count());
    }
}
