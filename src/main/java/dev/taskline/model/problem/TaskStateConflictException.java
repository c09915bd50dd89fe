package dev.taskline.model.problem;

import dev.taskline.model.TaskState;
import java.util.UUID;

/** The task is not in a state the operation applies to; nothing was changed. */
public final class TaskStateConflictException extends ProblemException {

    /** What the operation needed. */
    public enum Kind {
        ALREADY_FINISHED,
        NOT_RETRYABLE
    }

    private final Kind kind;
    private final UUID id;
    private final TaskState state;

    public TaskStateConflictException(Kind kind, UUID id, TaskState state) {
        super(
                409,
                kind == Kind.ALREADY_FINISHED ? "already-finished" : "not-retryable",
                kind == Kind.ALREADY_FINISHED ? "Already finished" : "Not retryable",
                kind == Kind.ALREADY_FINISHED
                        ? "task " + id + " already ended " + state.sql()
                        : "only failed, cancelled or expired tasks can be retried; task " + id + " is " + state.sql());
        this.kind = kind;
        this.id = id;
        this.state = state;
    }

    public Kind kind() {
        return kind;
    }

    public UUID id() {
        return id;
    }

    public TaskState state() {
        return state;
    }
}
