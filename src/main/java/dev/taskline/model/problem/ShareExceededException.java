package dev.taskline.model.problem;

import io.vertx.core.json.JsonObject;

/**
 * One holder already has its share of something the node has a fixed amount of (a tenant its part
 * of the open streams or of a queue's waiting claims; a stream token its one stream): the caller
 * should come back when one of its own has ended. Nothing was opened.
 */
public final class ShareExceededException extends ProblemException {

    private static final long RETRY_AFTER_SECONDS = 5;

    private final int share;

    public ShareExceededException(String message, int share) {
        super(429, "share-exceeded", "Share exceeded", message);
        this.share = share;
    }

    @Override
    public JsonObject extensions() {
        return new JsonObject().put("share", share).put("retryAfterSeconds", RETRY_AFTER_SECONDS);
    }

    @Override
    public Long retryAfterSeconds() {
        return RETRY_AFTER_SECONDS;
    }
}
