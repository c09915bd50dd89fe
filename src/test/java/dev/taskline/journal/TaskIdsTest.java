package dev.taskline.journal;

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
}
