package dev.taskline.model.problem;

/** A lease token that is not one this journal's nodes signed: garbled, cut, or made up. Nothing changed. */
public final class InvalidLeaseTokenException extends ProblemException {

    public InvalidLeaseTokenException(String message) {
        super(400, "invalid-lease", "Invalid lease", message);
    }
}
