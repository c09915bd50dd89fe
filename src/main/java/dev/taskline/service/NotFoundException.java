package dev.taskline.service;

import java.util.UUID;

/**
 * No such task or batch, as far as the caller may know: one it may not see is answered exactly
 * as one that does not exist, so that ids are no oracle.
 */
public class NotFoundException extends RuntimeException {

    public NotFoundException(String kind, UUID id) {
        super("no " + kind + " " + id, null, false, false);
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

    private NotFoundException(String message) {
        super(message, null, false, false);
    }
}
