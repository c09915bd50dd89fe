package dev.taskline.http;

import io.vertx.core.json.JsonObject;

/** A request the API refuses, with its status and problem type. Thrown only inside {@code http}. */
final class ApiException extends RuntimeException {

    private final int status;
    private final String type;
    private final String title;
    private final JsonObject extensions;

    private ApiException(int status, String type, String title, String detail, JsonObject extensions) {
        super(detail, null, false, false);
        this.status = status;
        this.type = type;
        this.title = title;
        this.extensions = extensions;
    }

    static ApiException badRequest(String detail) {
        return new ApiException(400, "malformed-request", "Malformed request", detail, null);
    }

    static ApiException notFound(String detail) {
        return new ApiException(404, "not-found", "Not found", detail, null);
    }

    static ApiException unsupportedMediaType(String detail) {
        return new ApiException(415, "unsupported-media-type", "Unsupported media type", detail, null);
    }

    static ApiException unprocessable(String detail) {
        return new ApiException(422, "invalid-task", "Invalid task", detail, null);
    }

    /** The caller did not say who it is, or said it wrongly: 401, with {@code WWW-Authenticate}. */
    static ApiException unauthorized(String detail) {
        return new ApiException(401, "unauthorized", "Unauthorized", detail, null);
    }

    /** A client address failed to authenticate too often this minute. */
    static ApiException tooManyFailures(long retryAfterSeconds) {
        return new ApiException(
                429,
                "too-many-failures",
                "Too many failed authentications",
                "this address failed to authenticate too often; try again later",
                new JsonObject().put("retryAfterSeconds", retryAfterSeconds));
    }

    int status() {
        return status;
    }

    String type() {
        return type;
    }

    String title() {
        return title;
    }

    JsonObject extensions() {
        return extensions;
    }
}
