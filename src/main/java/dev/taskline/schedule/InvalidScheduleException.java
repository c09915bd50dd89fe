package dev.taskline.schedule;

/** A schedule's definition breaks a rule (422); the message names the field. Nothing was changed. */
public final class InvalidScheduleException extends RuntimeException {

    public InvalidScheduleException(String message) {
        super(message, null, false, false);
    }
}
