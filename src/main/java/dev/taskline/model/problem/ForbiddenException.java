package dev.taskline.model.problem;

/** The caller is who it says, but may not do this (403). Nothing was changed. */
public final class ForbiddenException extends ProblemException {

    public ForbiddenException(String message) {
        super(403, "forbidden", "Forbidden", message);
    }
}
