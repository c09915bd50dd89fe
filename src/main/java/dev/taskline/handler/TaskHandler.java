package dev.taskline.handler;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

/**
 * A calculation Taskline can run. Implementations are found with {@link java.util.ServiceLoader},
 * so a jar on the classpath that lists its class in
 * {@code META-INF/services/dev.taskline.handler.TaskHandler} adds a task type.
 *
 * <p>A task may run more than once (a worker that lost its lease may still be computing), but its
 * result is committed at most once. Use {@link TaskContext#taskId()} and
 * {@link TaskContext#attempt()} as an idempotency key for effects outside Taskline.
 */
public interface TaskHandler {

    /** The {@code type} that submissions name to reach this handler. */
    String type();

    /**
     * Whether {@link #run} blocks its thread (JDBC, file I/O, a CPU-heavy loop). Blocking handlers
     * are called on a worker thread; the others on the event loop, where they must not block.
     */
    default boolean blocking() {
        return false;
    }

    /**
     * Checks a payload at submission time, so that a task which could never run is refused with 422
     * instead of being accepted and failing later. Throw {@link InvalidPayloadException} to refuse.
     */
    default void validate(JsonObject payload) throws InvalidPayloadException {}

    /**
     * Runs one attempt. The result is stored as the task's result. A failed future fails the attempt,
     * which is retried while the task has attempts left; fail with {@link PermanentTaskException} to
     * fail the task at once, or with {@link SnoozeException} to run again later without spending an
     * attempt.
     */
    Future<JsonObject> run(TaskContext context);
}
