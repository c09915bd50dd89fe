package dev.taskline.handler;

/** A payload that a handler refuses at submission time; the API answers 422 with this message. */
public class InvalidPayloadException extends Exception {
    public InvalidPayloadException(String message) {
        super(message, null, false, false);
    }
}
