package dev.taskline.model;

import io.vertx.core.json.Json;

/**
 * What one of a flow task's parents ended with, as the task reads it when it starts: its key in the
 * flow, its state, and its result (or, for a parent that did not succeed, its error) as the JSON
 * text the journal holds. Kept as text: a fan-in of thousands is passed on to a remote worker as
 * it is, and decoded for a handler only when it asks.
 */
public record ParentResult(String key, TaskState state, String resultJson, String errorJson) {

    /** What a reader of {@code parents} gets for it, as JSON text: the result, or for a parent that did not succeed its error. */
    public String valueJson() {
        return state == TaskState.SUCCEEDED ? resultJson : errorJson;
    }

    /** {@link #valueJson} decoded (a JsonObject for an object); null for none. */
    public Object value() {
        String json = valueJson();
        return json == null ? null : Json.decodeValue(json);
    }
}
