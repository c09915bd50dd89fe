package dev.taskline.model;

import java.time.Instant;
import java.util.UUID;

/**
 * A schedule's row: {@code spec} is its definition as JSON text; {@code changedAt} when it was
 * last paused or resumed (or made); {@code lastTickAt} the newest tick decided, null for none, and
 * {@code lastDecidedBy} the node that decided it.
 */
public record StoredSchedule(
        UUID id,
        String name,
        String spec,
        boolean paused,
        Instant createdAt,
        Instant changedAt,
        Instant lastTickAt,
        String lastDecidedBy) {}
