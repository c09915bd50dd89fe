package dev.taskline.handler;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.UUID;

/** What a handler knows about the attempt it runs. */
public interface TaskContext {

    UUID taskId();

    /** The task's type, as submitted. */
    String type();

    /** The version of the lease this attempt holds; every write it makes is fenced by it. */
    long leaseVersion();

    /** 1 for the first attempt; grows with each claim of the task. */
    int attempt();

    /**
     * The tick a schedule made this task for (the time it was due by its cron or interval, which the
     * task's own start may follow by a little or, caught up, by much); null for a task no schedule made.
     */
    default java.time.Instant scheduledFor() {
        return null;
    }

    /** The task's key in its flow; null for a task of no flow. */
    default String flowKey() {
        return null;
    }

    /**
     * A flow task's parents, by key: each one's result, or, for a parent that did not succeed (a
     * task that joins {@code settled} or {@code any} runs after such a parent), its error; empty for
     * a task with no parents. Read from the journal as the attempt starts.
     */
    default java.util.Map<String, Object> parents() {
        return java.util.Map.of();
    }

    /** How each of {@link #parents()} ended, by key: {@code succeeded}, {@code failed}, {@code cancelled} or {@code expired}. */
    default java.util.Map<String, String> parentStates() {
        return java.util.Map.of();
    }

    /**
     * Adds a task to this task's flow, committed with this attempt's success and fenced by its lease
     * like it (nothing is added by an attempt that fails or loses its lease). {@code task} is a task
     * as a flow's {@code tasks} takes it: type, payload and options, and optionally key (by default
     * this task's key and the spawn's place: {@code fetch.0}, {@code fetch.1}), dependsOn (other
     * tasks of this attempt's spawn) and join. It runs after this task; this task's dependents wait
     * for it too, unless another spawned task depends on it. Returns its key.
     *
     * @throws IllegalStateException for a task in no flow
     */
    default String spawn(io.vertx.core.json.JsonObject task) {
        throw new IllegalStateException("only a task of a flow may spawn tasks into it");
    }

    /** The task's payload: a copy of its own for this attempt, so changes to it are not kept. */
    JsonObject payload();

    /** For timers and other non-blocking work; never block its event loop. */
    Vertx vertx();

    /**
     * Reports progress. Cheap to call often: the latest value is kept and written to the journal at a
     * bounded rate, and only while this attempt still holds its lease.
     */
    void progress(int percent, String message);

    /**
     * Whether this attempt should stop: the task was cancelled, its attempt timed out, or the node is
     * shutting down and its grace period ended. A long handler checks it between steps.
     */
    boolean cancelled();

    /** Runs {@code action} once when the attempt is told to stop (at once if it already was). */
    void onCancel(Runnable action);
}
