package dev.taskline.model.problem;

/** A key that cannot be issued or revoked as asked: its id is taken, or it is one of the config's (409). */
public final class KeyConflictException extends ProblemException {

    public KeyConflictException(String message) {
        super(409, "key-conflict", "Key conflict", message);
    }
}
