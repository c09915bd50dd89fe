package dev.taskline.service;

/** This node already serves as many open streams as it is configured to; another node may not. */
public class TooManyStreamsException extends RuntimeException {

    public static final long RETRY_AFTER_SECONDS = 5;

    public TooManyStreamsException(int max) {
        super("this node serves its most open streams (" + max + "); try again or another node", null, false, false);
    }
}
