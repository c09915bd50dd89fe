package dev.taskline.model.problem;

import io.vertx.core.json.JsonObject;

/** As many claims as a queue may hold waiting already wait on this node; the worker should come back. */
public final class TooManyClaimsException extends ProblemException {

    private static final long RETRY_AFTER_SECONDS = 1;

    public TooManyClaimsException(String queue, int max) {
        super(
                429,
                "too-many-claims",
                "Too many claims waiting",
                "queue '" + queue + "' already has " + max + " claims waiting on this node");
    }

    @Override
    public JsonObject extensions() {
        return new JsonObject().put("retryAfterSeconds", RETRY_AFTER_SECONDS);
    }

    @Override
    public Long retryAfterSeconds() {
        return RETRY_AFTER_SECONDS;
    }
}
