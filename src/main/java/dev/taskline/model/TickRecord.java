package dev.taskline.model;

import java.time.Instant;
import java.util.UUID;

/** A decided tick, for a schedule's recent history. */
public record TickRecord(
        Instant tickAt,
        String outcome,
        UUID taskId,
        String reason,
        String detail,
        long ticks,
        Instant decidedAt,
        String decidedBy,
        String taskState) {}
