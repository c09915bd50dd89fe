package dev.taskline.model;

import java.time.Instant;

/**
 * A suspend as a remote worker or a push target asks it: its step, what it waits for, and when
 * the wait ends, either {@code until} or {@code afterMs} from when the node reads it (both null:
 * no end).
 */
public record Suspend(
        String step, Wait.Kind kind, String name, String field, String value, Instant until, Long afterMs) {

    /** The wait, its end read at {@code now}: 422 when it would end more than a year ahead (see {@link Instants}). */
    public Wait at(Instant now) {
        Instant end = until != null ? until : afterMs == null ? null : now.plusMillis(afterMs);
        String flaw = end == null ? null : Instants.flaw(end, now);
        if (flaw != null) {
            throw new dev.taskline.model.problem.InvalidTaskException(
                    (until != null ? "suspend.until " : "the wait's end ") + flaw);
        }
        return new Wait(kind, step, name, field, value, end);
    }
}
