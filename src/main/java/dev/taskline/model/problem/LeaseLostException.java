package dev.taskline.model.problem;

import dev.taskline.model.TaskState;
import io.vertx.core.json.JsonObject;
import java.util.UUID;

/**
 * A remote worker's write named a lease it no longer holds (it lapsed and another took the task,
 * the task was cancelled or retried, the version moved on): the write changed nothing and was
 * counted as fenced. {@code state} is the task's state now, null when it is gone.
 */
public final class LeaseLostException extends ProblemException {

    private final UUID taskId;
    private final TaskState state;

    public LeaseLostException(UUID taskId, TaskState state) {
        super(
                409,
                "lease-lost",
                "Lease lost",
                "the lease on task " + taskId + " was lost" + (state == null ? "" : "; the task is " + state.sql()));
        this.taskId = taskId;
        this.state = state;
    }

    public UUID taskId() {
        return taskId;
    }

    public TaskState state() {
        return state;
    }

    @Override
    public JsonObject extensions() {
        return new JsonObject().put("taskId", taskId.toString()).put("state", state == null ? null : state.sql());
    }
}
