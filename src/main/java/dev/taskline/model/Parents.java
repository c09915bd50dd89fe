package dev.taskline.model;

import io.vertx.core.json.JsonObject;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * What a flow task's parents ended with, as the task reads it when it starts: {@code count} of
 * them, weighing {@code bytes} (results and errors as JSON text); {@code valuesJson}
 * maps each parent's key to its result (or, for a parent that did not succeed, its error), {@code
 * statesJson} each key to how it ended, both JSON objects as text, built by the journal in one
 * row. Kept as text: a fan-in of thousands is passed on to a remote worker as it is, and decoded
 * for a handler only when it asks. Both are null when the parents weigh more than a task is
 * handed inline ({@code flows.maxParentBytes}): the task is given a reference, and reads them in
 * pages ({@link ParentsPage}).
 */
public record Parents(int count, long bytes, String valuesJson, String statesJson) {

    public static final Parents NONE = new Parents(0, 0, "{}", "{}");

    /** Too much to hand over inline: read in pages. */
    public boolean byReference() {
        return valuesJson == null;
    }

    /** Where a task's parents are read in pages, relative to the API's root. */
    public static String url(java.util.UUID taskId) {
        return "/api/tasks/" + taskId + "/parents";
    }

    /** Key to result (or error), decoded. */
    public Map<String, Object> values() {
        return decode(valuesJson);
    }

    /** Key to state, decoded. */
    public Map<String, String> states() {
        Map<String, String> states = new LinkedHashMap<>();
        new JsonObject(statesJson).forEach(e -> states.put(e.getKey(), (String) e.getValue()));
        return Collections.unmodifiableMap(states);
    }

    private static Map<String, Object> decode(String json) {
        // Through the object's entries, which give nested objects and arrays as JsonObject and JsonArray.
        Map<String, Object> values = new LinkedHashMap<>();
        new JsonObject(json).forEach(e -> values.put(e.getKey(), e.getValue()));
        return Collections.unmodifiableMap(values);
    }
}
