package dev.taskline.handler;

/** A handler jar could not be loaded, or two handlers claim one task type: the node does not start. */
public class HandlerLoadException extends RuntimeException {

    public HandlerLoadException(String message, Throwable cause) {
        super(message, cause);
    }
}
