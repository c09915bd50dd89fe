package dev.taskline.model;

/**
 * The event-bus addresses one part publishes on and another listens to, here so that neither has
 * to import the other to agree on them.
 */
public final class BusAddresses {

    /** Where the ids of running tasks asked to cancel are published (a JSON array of texts), for every worker. */
    public static final String CANCEL = "taskline.cancel";

    private BusAddresses() {}
}
