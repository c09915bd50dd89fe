package dev.taskline.worker;

import dev.taskline.model.TaskState;
import java.util.UUID;

/**
 * A remote worker's write named a lease it no longer holds (it lapsed and another took the task,
 * the task was cancelled or retried, the version moved on): the write changed nothing and was
 * counted as fenced. {@code state} is the task's state now, null when it is gone.
 */
public class LeaseLostException extends RuntimeException {

    private final UUID taskId;
    private final TaskState state;

    public LeaseLostException(UUID taskId, TaskState state) {
        super(
                "the lease on task " + taskId + " was lost" + (state == null ? "" : "; the task is " + state.sql()),
                null,
                false,
                false);
        this.taskId = taskId;
        this.state = state;
    }

    public UUID taskId() {
        return taskId;
    }

    public TaskState state() {
        return state;
    }
}
