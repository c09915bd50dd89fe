package dev.taskline.handler;

/** A failure that another attempt cannot fix (bad input, a refused request): the task fails now. */
public class PermanentTaskException extends RuntimeException {
    public PermanentTaskException(String message) {
        super(message);
    }

    public PermanentTaskException(String message, Throwable cause) {
        super(message, cause);
    }
}
