package dev.taskline.model.problem;

/** A schedule's definition breaks a rule (422); the message names the field. Nothing was changed. */
public final class InvalidScheduleException extends ProblemException {

    public InvalidScheduleException(String message) {
        super(422, "invalid-schedule", "Invalid schedule", message);
    }
}
