package dev.taskline.worker;

import io.vertx.core.json.JsonObject;

/** How an attempt ended, before it is recorded. */
sealed interface Outcome {

    /** The handler returned a result. */
    record Succeeded(JsonObject result) implements Outcome {}

    /** The handler failed (or was not found). */
    record Failed(Throwable cause) implements Outcome {}

    /** The attempt ran past its timeout; the handler was told to stop and its slot freed. */
    record TimedOut(long timeoutMs) implements Outcome {}

    /** The journal refused our heartbeat: someone else holds the task now; we write nothing more. */
    record LeaseLost() implements Outcome {}

    /** The node is shutting down and the grace period ended: the task goes back for others. */
    record Released() implements Outcome {}
}
