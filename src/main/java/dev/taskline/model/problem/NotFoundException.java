package dev.taskline.model.problem;

import java.util.UUID;

/**
 * No such task or batch, as far as the caller may know: one it may not see is answered exactly
 * as one that does not exist, so that ids are no oracle.
 */
public final class NotFoundException extends ProblemException {

    public NotFoundException(String kind, UUID id) {
        this("no " + kind + " " + id);
    }

    /** No queue of that name on this node. */
    public static NotFoundException queue(String name) {
        return new NotFoundException("no queue '" + name + "'");
    }

    /** No schedule of that name. */
    public static NotFoundException schedule(String name) {
        return new NotFoundException("no schedule '" + name + "'");
    }

    /** No live issued key of that id. */
    public static NotFoundException key(String id) {
        return new NotFoundException("no key '" + id + "' issued through the API, or it is revoked already");
    }

    /** An id that cannot be one of anything (not a UUID): nothing is looked up, so nothing is told. */
    public static NotFoundException notAnId(String text) {
        return new NotFoundException("no such id: " + text);
    }

    private NotFoundException(String message) {
        super(404, "not-found", "Not found", message);
    }
}
