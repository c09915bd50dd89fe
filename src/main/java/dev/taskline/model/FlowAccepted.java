package dev.taskline.model;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** A flow journaled (or, for a replayed Idempotency-Key, journaled earlier): its id and its tasks. */
public record FlowAccepted(UUID flowId, String tenant, List<Member> tasks, boolean replayed) {

    /** One task of it: its key, id and state when journaled (blocked, pending or running). */
    public record Member(String key, UUID id, String state) {}

    public JsonObject stored() {
        JsonArray list = new JsonArray();
        tasks.forEach(m -> list.add(new JsonObject()
                .put("key", m.key())
                .put("id", m.id().toString())
                .put("state", m.state())));
        return new JsonObject().put("flowId", flowId.toString()).put("tasks", list);
    }

    public static FlowAccepted replayed(JsonObject stored, String tenant) {
        List<Member> members = new ArrayList<>();
        for (Object item : stored.getJsonArray("tasks")) {
            JsonObject m = (JsonObject) item;
            members.add(new Member(m.getString("key"), UUID.fromString(m.getString("id")), m.getString("state")));
        }
        return new FlowAccepted(UUID.fromString(stored.getString("flowId")), tenant, members, true);
    }
}
