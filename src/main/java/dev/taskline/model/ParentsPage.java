package dev.taskline.model;

import java.util.List;
import java.util.UUID;

/**
 * A page of what a flow task's parents ended with, in the order of their keys: each one's key,
 * state and result (or error), as JSON text. {@code next}: the key to read on after (null: the
 * last page). {@code tenant} and {@code queue} are the child's, for the reader's rights.
 */
public record ParentsPage(UUID taskId, String tenant, String queue, List<Item> items, String next) {

    /** One parent: {@code valueJson} its result when it succeeded, else its error (either may be null). */
    public record Item(String key, TaskState state, String valueJson) {}

    /** {@code page} as the API shows it (null, a task gone: no parents). */
    public static io.vertx.core.json.JsonObject jsonOf(ParentsPage page) {
        return page == null
                ? new io.vertx.core.json.JsonObject()
                        .put("items", new io.vertx.core.json.JsonArray())
                        .putNull("next")
                : page.json();
    }

    /** As the API shows it: {@code {items: [{key, state, result | error}], next}}. */
    public io.vertx.core.json.JsonObject json() {
        io.vertx.core.json.JsonArray list = new io.vertx.core.json.JsonArray();
        for (Item item : items) {
            Object value = item.valueJson() == null ? null : io.vertx.core.json.Json.decodeValue(item.valueJson());
            list.add(new io.vertx.core.json.JsonObject()
                    .put("key", item.key())
                    .put("state", item.state().sql())
                    .put(item.state() == TaskState.SUCCEEDED ? "result" : "error", value));
        }
        return new io.vertx.core.json.JsonObject().put("items", list).put("next", next);
    }
}
