package dev.taskline.admission;

/** The node is draining for shutdown and takes no new work; another node (or this one, restarted) will. */
public class ShuttingDownException extends RuntimeException {
    public ShuttingDownException() {
        super("this node is shutting down and takes no new work", null, false, false);
    }
}
