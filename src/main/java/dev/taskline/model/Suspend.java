package dev.taskline.model;

import java.time.Instant;

/**
 * A suspend as a remote worker or a push target asks it: its step, what it waits for, and when
 * the wait ends, either {@code until} or {@code afterMs} from when the node reads it (both null:
 * no end).
 */
public record Suspend(
        String step, Wait.Kind kind, String name, String field, String value, Instant until, Long afterMs) {

    public Wait at(Instant now) {
        Instant end = until != null ? until : afterMs == null ? null : now.plusMillis(afterMs);
        return new Wait(kind, step, name, field, value, end);
    }
}
