package dev.taskline.service;

/** The caller is who it says, but may not do this (403). Nothing was changed. */
public final class ForbiddenException extends RuntimeException {

    public ForbiddenException(String message) {
        super(message, null, false, false);
    }
}
