package dev.taskline.model;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Clock;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class TaskIdsTest {

    @Test
    void idsFromOneNodeIncreaseEvenWhenTheClockStandsStill() {
        Clock still = Clock.fixed(Instant.parse("2026-01-01T00:00:00Z"), ZoneOffset.UTC);
        UUID previous = TaskIds.next(still);
        for (int i = 0; i < 10_000; i++) {
            UUID next = TaskIds.next(still);
            assertTrue(TaskIds.compare(previous, next) < 0, previous + " then " + next);
            previous = next;
        }
    }

    @Test
    void compareOrdersLikePostgresUuidBytesWhereUuidCompareToDoesNot() {
        // Unsigned, byte by byte: 0x8... is above 0x7...; UUID.compareTo sees a negative long below.
        UUID low = new UUID(0x7000000000000000L, 0L);
        UUID high = new UUID(0x8000000000000000L, 0L);
        assertTrue(TaskIds.compare(low, high) < 0);
        assertTrue(low.compareTo(high) > 0);
        assertEquals(0, TaskIds.compare(high, new UUID(0x8000000000000000L, 0L)));
        // Same check on the hex text, whose order PostgreSQL's uuid order matches.
        List<UUID> ids = new ArrayList<>(List.of(high, low, new UUID(1L, -1L), new UUID(1L, 1L)));
        ids.sort(TaskIds::compare);
        List<String> texts = new ArrayList<>(ids.stream().map(UUID::toString).toList());
        List<String> sorted = new ArrayList<>(texts);
        sorted.sort(String::compareTo);
        assertEquals(sorted, texts);
    }

    @Test
    void the_least_id_of_a_millisecond_sorts_above_every_id_of_earlier_ones_and_not_above_any_of_its_own() {
        Instant at = Instant.parse("2026-12-01T12:00:00.123Z");
        long ms = at.toEpochMilli();
        UUID least = TaskIds.least(at);
        // The largest id of the millisecond before (counter and random bits all ones), the least of this one.
        UUID lastBefore = new UUID(((ms - 1) << 16) | 0x7FFFL, 0xBFFFFFFFFFFFFFFFL);
        UUID firstDuring = new UUID((ms << 16) | 0x7000L, 0x8000000000000000L);
        UUID lastDuring = new UUID((ms << 16) | 0x7FFFL, 0xBFFFFFFFFFFFFFFFL);
        assertTrue(TaskIds.compare(lastBefore, least) < 0, lastBefore + " before " + least);
        assertEquals(0, TaskIds.compare(least, firstDuring));
        assertTrue(TaskIds.compare(least, lastDuring) < 0);
        assertEquals(7, least.version());
        assertEquals(2, least.variant());
    }
}
