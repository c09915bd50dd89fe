package dev.taskline.model.problem;

import io.vertx.core.json.JsonObject;

/** The submitting tenant already has its limit of unfinished tasks in the queue; nothing was journaled. */
public final class TenantLimitException extends ProblemException {

    private final String queue;
    private final String tenant;
    private final int limit;
    private final int unfinished;
    private final int requested;
    private final long retryAfterSeconds;

    public TenantLimitException(
            String queue, String tenant, int limit, int unfinished, int requested, long retryAfterSeconds) {
        super(
                429,
                "tenant-limit",
                "Tenant limit reached",
                "tenant '" + tenant + "' has " + unfinished + " unfinished tasks in queue '" + queue
                        + "', its limit is " + limit + ", " + requested + " requested");
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

    @Override
    public Long retryAfterSeconds() {
        return retryAfterSeconds;
    }

    @Override
    public JsonObject extensions() {
        return new JsonObject()
                .put("queue", queue)
                .put("tenant", tenant)
                .put("limit", limit)
                .put("unfinished", unfinished)
                .put("requested", requested)
                .put("retryAfterSeconds", retryAfterSeconds);
    }

    @Override
    public boolean refusesWork() {
        return true;
    }
}
