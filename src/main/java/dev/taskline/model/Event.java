package dev.taskline.model;

import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.UUID;

/**
 * One journaled transition of a task. {@code from} is null for the submission; {@code workerId},
 * {@code leaseVersion}, {@code attempt} and {@code detail} are null where the transition has none.
 * {@code result} is the task's result, given with a transition to succeeded when it was read for a
 * stream, null otherwise.
 */
public record Event(
        long eventId,
        UUID taskId,
        TaskState from,
        TaskState to,
        Reason reason,
        String workerId,
        Long leaseVersion,
        Integer attempt,
        Instant at,
        JsonObject detail,
        Object result) {

    /** What a detail names the key that acted under: a cancel, a retry (see the journal's cancel and retry). */
    public static final String ACTOR = "by";

    /** The same transition without the key that made it, for a reader who may not know it; itself when it names none. */
    public Event withoutActor() {
        if (detail == null || !detail.containsKey(ACTOR)) {
            return this;
        }
        JsonObject rest = detail.copy();
        rest.remove(ACTOR);
        return new Event(
                eventId,
                taskId,
                from,
                to,
                reason,
                workerId,
                leaseVersion,
                attempt,
                at,
                rest.isEmpty() ? null : rest,
                result);
    }
}
