package dev.taskline.model.problem;

/** The node is draining for shutdown and takes no new work; another node (or this one, restarted) will. */
public final class ShuttingDownException extends ProblemException {
    /** A draining node answers until it stops; a client should come back once it (or another) is up. */
    private static final long RETRY_AFTER_SECONDS = 5;

    public ShuttingDownException() {
        super(503, "shutting-down", "Shutting down", "this node is shutting down and takes no new work");
    }

    @Override
    public Long retryAfterSeconds() {
        return RETRY_AFTER_SECONDS;
    }
}
