package dev.taskline.model.problem;

/** A well-formed submission that breaks a rule (unknown type or queue, bad range, batch size). */
public final class InvalidTaskException extends ProblemException {
    public InvalidTaskException(String message) {
        super(422, "invalid-task", "Invalid task", message);
    }
}
