package dev.taskline.admission;

/** The submitting tenant already has its limit of unfinished tasks in the queue; nothing was journaled. */
public class TenantLimitException extends RuntimeException {

    private final String queue;
    private final String tenant;
    private final int limit;
    private final int unfinished;
    private final int requested;
    private final long retryAfterSeconds;

    public TenantLimitException(
            String queue, String tenant, int limit, int unfinished, int requested, long retryAfterSeconds) {
        super(
                "tenant '" + tenant + "' has " + unfinished + " unfinished tasks in queue '" + queue
                        + "', its limit is " + limit + ", " + requested + " requested",
                null,
                false,
                false);
        this.queue = queue;
        this.tenant = tenant;
        this.limit = limit;
        this.unfinished = unfinished;
        this.requested = requested;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public String queue() {
        return queue;
    }

    public String tenant() {
        return tenant;
    }

    public int limit() {
        return limit;
    }

    public int unfinished() {
        return unfinished;
    }

    public int requested() {
        return requested;
    }

    public long retryAfterSeconds() {
        return retryAfterSeconds;
    }
}
