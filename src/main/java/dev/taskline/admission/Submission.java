package dev.taskline.admission;

import io.vertx.core.json.JsonObject;

/**
 * One task as a client asked for it, already of the right JSON types; null fields take the
 * queue's defaults.
 */
public record Submission(String type, JsonObject payload, String queue, Integer priority, Integer maxAttempts,
    Long timeoutMs) {
}
