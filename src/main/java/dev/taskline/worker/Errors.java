package dev.taskline.worker;

import io.vertx.core.json.JsonObject;

/** How a failed attempt is recorded: what a user needs to act on, never a stack trace. */
final class Errors {

    private static final int MAX_MESSAGE = 2_000;

    private Errors() {}

    static JsonObject describe(Throwable failure) {
        String message = failure.getMessage();
        if (message == null || message.isBlank()) {
            message = failure.getClass().getSimpleName();
        }
        if (message.length() > MAX_MESSAGE) {
            message = message.substring(0, MAX_MESSAGE) + "...";
        }
        return new JsonObject().put("type", failure.getClass().getName()).put("message", message);
    }
}
