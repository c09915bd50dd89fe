package dev.taskline.worker;

import dev.taskline.model.Wait;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;

/**
 * What an attempt reported, before anything is decided: the facts {@link Endings} turns into an
 * {@link End}. The first five come from an attempt run on this node, the last four from a remote
 * worker's request (which cannot know of a cancel asked meanwhile: the journal settles that).
 */
sealed interface Outcome {

    /** The handler returned a result. */
    record Succeeded(JsonObject result) implements Outcome {}

    /** The handler failed (or was not found). */
    record Failed(Throwable cause) implements Outcome {}

    /** The attempt ran past its timeout, here or at a remote worker that kept heartbeating. */
    record TimedOut(long timeoutMs) implements Outcome {}

    /** The journal refused our heartbeat: someone else holds the task now; we write nothing more. */
    record LeaseLost() implements Outcome {}

    /** The node is shutting down and the grace period ended: the task goes back for others. */
    record Released() implements Outcome {}

    /** A remote worker completed the attempt, with what it spawned (null or empty: nothing). */
    record Completed(JsonObject result, JsonArray spawn) implements Outcome {}

    /**
     * A remote worker failed the attempt: tried again while {@code retry} and attempts are left,
     * after {@code retryAfterMs} (null: the queue's backoff).
     */
    record Reported(JsonObject error, boolean retry, Long retryAfterMs) implements Outcome {}

    /** A remote worker put the task back: due in {@code snoozeMs} (a snooze), or at once with null. */
    record PutBack(Long snoozeMs) implements Outcome {}

    /** A remote worker ended the attempt waiting on {@code waitFor}. */
    record Suspending(Wait waitFor) implements Outcome {}
}
