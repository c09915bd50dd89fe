package dev.taskline.model.problem;

import io.vertx.core.json.JsonObject;

/**
 * A flow (or a spawn) would take the journal past its bound on blocked tasks ({@code
 * flows.maxBlocked}), or its tenant past its share of it: its tasks that wait for parents would have
 * nowhere to wait. Nothing was journaled; the bound frees as blocked tasks run or end.
 */
public final class TooManyBlockedException extends ProblemException {

    private static final long RETRY_AFTER_SECONDS = 5;

    private final long limit;
    private final long blocked;
    private final int wanted;
    private final String tenant;

    /** {@code tenant}: the tenant whose share is full, or null when the journal's bound is. */
    public TooManyBlockedException(long limit, long blocked, int wanted, String tenant) {
        super(
                429,
                "too-many-blocked",
                "Too many blocked tasks",
                (tenant == null
                                ? "the journal holds at most " + limit + " blocked flow tasks (flows.maxBlocked)"
                                : "tenant '" + tenant + "' may hold at most " + limit
                                        + " blocked flow tasks (its share of flows.maxBlocked)")
                        + " and holds about " + blocked + "; this would add " + wanted);
        this.limit = limit;
        this.blocked = blocked;
        this.wanted = wanted;
        this.tenant = tenant;
    }

    @Override
    public JsonObject extensions() {
        JsonObject extensions = new JsonObject()
                .put("limit", limit)
                .put("blocked", blocked)
                .put("wanted", wanted)
                .put("retryAfterSeconds", RETRY_AFTER_SECONDS);
        return tenant == null ? extensions : extensions.put("tenant", tenant);
    }

    @Override
    public Long retryAfterSeconds() {
        return RETRY_AFTER_SECONDS;
    }
}
