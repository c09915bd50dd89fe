package dev.taskline.service;

/** A key that cannot be issued or revoked as asked: its id is taken, or it is one of the config's (409). */
public final class KeyConflictException extends RuntimeException {

    public KeyConflictException(String message) {
        super(message, null, false, false);
    }
}
