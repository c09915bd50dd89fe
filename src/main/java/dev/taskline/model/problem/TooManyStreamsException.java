package dev.taskline.model.problem;

import io.vertx.core.json.JsonObject;

/** This node already serves as many open streams as it is configured to; another node may not. */
public final class TooManyStreamsException extends ProblemException {

    private static final long RETRY_AFTER_SECONDS = 5;

    public TooManyStreamsException(int max) {
        super(
                503,
                "unavailable",
                "Unavailable",
                "this node serves its most open streams (" + max + "); try again or another node");
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
