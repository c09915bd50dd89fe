package dev.taskline.model.problem;

import io.vertx.core.json.JsonObject;

/** A request the API refuses before any part is asked: it cannot be read, or its caller is not known. */
public final class ApiException extends ProblemException {

    private final JsonObject extensions;

    private ApiException(int status, String type, String title, String detail, JsonObject extensions) {
        super(status, type, title, detail);
        this.extensions = extensions;
    }

    public static ApiException badRequest(String detail) {
        return new ApiException(400, "malformed-request", "Malformed request", detail, null);
    }

    /**
     * Valid JSON whose text can never be stored as sent (a NUL, a lone surrogate): 422, as any body
     * that breaks a rule.
     */
    public static ApiException invalidText(String detail) {
        return new ApiException(422, "invalid-text", "Invalid text", detail, null);
    }

    public static ApiException unsupportedMediaType(String detail) {
        return new ApiException(415, "unsupported-media-type", "Unsupported media type", detail, null);
    }

    /** The caller did not say who it is, or said it wrongly: 401, with {@code WWW-Authenticate}. */
    public static ApiException unauthorized(String detail) {
        return new ApiException(401, "unauthorized", "Unauthorized", detail, null);
    }

    /** A client address, or the key it presented, failed to authenticate too often this minute. */
    public static ApiException tooManyFailures(long retryAfterSeconds) {
        return new ApiException(
                429,
                "too-many-failures",
                "Too many failed authentications",
                "this address, or this key, failed to authenticate too often; try again later",
                new JsonObject().put("retryAfterSeconds", retryAfterSeconds));
    }

    @Override
    public JsonObject extensions() {
        return extensions;
    }

    @Override
    public Long retryAfterSeconds() {
        return extensions == null ? null : extensions.getLong("retryAfterSeconds");
    }
}
