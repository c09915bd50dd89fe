package dev.taskline.admission;

/** A well-formed submission that breaks a rule (unknown type or queue, bad range, batch size). */
public class InvalidTaskException extends RuntimeException {
    public InvalidTaskException(String message) {
        super(message, null, false, false);
    }
}
