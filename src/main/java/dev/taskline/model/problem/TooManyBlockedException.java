package dev.taskline.model.problem;

import io.vertx.core.json.JsonObject;

/**
 * A flow would take the journal past its bound on blocked tasks ({@code flows.maxBlocked}): its
 * tasks that wait for parents would have nowhere to wait. Nothing was journaled; the bound frees
 * as blocked tasks run or end.
 */
public final class TooManyBlockedException extends ProblemException {

    private static final long RETRY_AFTER_SECONDS = 5;

    private final long limit;
    private final long blocked;
    private final int wanted;

    public TooManyBlockedException(long limit, long blocked, int wanted) {
        super(
                429,
                "too-many-blocked",
                "Too many blocked tasks",
                "the journal holds at most " + limit + " blocked flow tasks (flows.maxBlocked) and holds about "
                        + blocked + "; this flow would add " + wanted);
        this.limit = limit;
        this.blocked = blocked;
        this.wanted = wanted;
    }

    @Override
    public JsonObject extensions() {
        return new JsonObject()
                .put("limit", limit)
                .put("blocked", blocked)
                .put("wanted", wanted)
                .put("retryAfterSeconds", RETRY_AFTER_SECONDS);
    }

    @Override
    public Long retryAfterSeconds() {
        return RETRY_AFTER_SECONDS;
    }
}
