package dev.taskline.worker;

import dev.taskline.model.StoredJson;
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
        if (StoredJson.flaw(message) != null) {
            // A message the journal could not keep would leave the attempt's end unrecorded.
            message = storable(message);
        }
        return new JsonObject().put("type", failure.getClass().getName()).put("message", message);
    }

    /** {@code text} with each NUL and lone surrogate replaced by U+FFFD. */
    static String storable(String text) {
        StringBuilder out = new StringBuilder(text.length());
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            if (Character.isHighSurrogate(c) && i + 1 < text.length() && Character.isLowSurrogate(text.charAt(i + 1))) {
                out.append(c).append(text.charAt(++i));
            } else {
                out.append(c == '\0' || Character.isSurrogate(c) ? '\uFFFD' : c);
            }
        }
        return out.toString();
    }
}
