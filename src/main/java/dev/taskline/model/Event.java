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
        Object result) {}
