package dev.taskline.worker;

/** As many claims as a queue may hold waiting already wait on this node; the worker should come back. */
public class TooManyClaimsException extends RuntimeException {

    public static final long RETRY_AFTER_SECONDS = 1;

    public TooManyClaimsException(String queue, int max) {
        super("queue '" + queue + "' already has " + max + " claims waiting on this node", null, false, false);
    }
}
