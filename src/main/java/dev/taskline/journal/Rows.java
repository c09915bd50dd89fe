package dev.taskline.journal;

import dev.taskline.model.Parents;
import dev.taskline.model.Settled;
import dev.taskline.model.Task;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** Reading the journal's rows the same way in every class of the package. */
final class Rows {

    private Rows() {}

    /** A timestamptz column as an instant; null for SQL NULL. */
    static Instant instant(Row row, String column) {
        OffsetDateTime time = row.getOffsetDateTime(column);
        return time == null ? null : time.toInstant();
    }

    /**
     * What a row of a statement that may settle flows is: null for the statement's own rows, else
     * 'ready', 'cancelled' or 'flow' (see flow_settle); null too for a statement that settles none.
     */
    static String kind(Row row) {
        return row.getColumnIndex("kind") < 0 ? null : row.getString("kind");
    }

    /** A task read back to be held again, as page_in and retry return them. */
    static Task task(Row row) {
        return Task.builder(row.getUUID("id"), row.getString("queue"), row.getString("type"))
                .payloadJson(row.getString("payload"))
                .priority(row.getInteger("priority"))
                .maxAttempts(row.getInteger("max_attempts"))
                .timeoutMs(row.getLong("timeout_ms"))
                .tenant(row.getString("tenant"))
                .concurrencyKey(row.getString("concurrency_key"))
                .startBy(instant(row, "start_by"))
                .scheduled(row.getString("schedule"), instant(row, "scheduled_for"))
                .flow(row.getUUID("flow_id"))
                .flowKey(row.getString("flow_key"))
                .hasParents(row.getString("join_mode") != null)
                .runAt(row.getOffsetDateTime("run_at").toInstant())
                .leased(row.getLong("lease_version"), row.getInteger("attempt"))
                .durable(row.getColumnIndex("durable") >= 0 && Boolean.TRUE.equals(row.getBoolean("durable")))
                .build();
    }

    /** A child flow_settle made ready, from the jsonb it answers (its page-in columns). */
    static Task readyTask(UUID id, JsonObject t) {
        return Task.builder(id, t.getString("queue"), t.getString("type"))
                .payloadJson(t.getString("payload"))
                .priority(t.getInteger("priority"))
                .maxAttempts(t.getInteger("max_attempts"))
                .timeoutMs(t.getLong("timeout_ms"))
                .tenant(t.getString("tenant"))
                .concurrencyKey(t.getString("concurrency_key"))
                .startBy(
                        t.getString("start_by") == null
                                ? null
                                : OffsetDateTime.parse(t.getString("start_by")).toInstant())
                .flow(UUID.fromString(t.getString("flow_id")))
                .flowKey(t.getString("flow_key"))
                .hasParents(t.getString("join_mode") != null)
                .runAt(OffsetDateTime.parse(t.getString("run_at")).toInstant())
                .leased(t.getLong("lease_version"), t.getInteger("attempt"))
                .build();
    }

    /**
     * The rows of kind 'ready', 'cancelled' and 'flow' that a statement ending flow tasks returns
     * beside its own (whose kind is null): what flow_settle settled.
     */
    static Settled settled(Iterable<Row> rows) {
        List<Task> ready = new ArrayList<>();
        List<UUID> cancelled = new ArrayList<>();
        List<Settled.FlowEnd> ended = new ArrayList<>();
        Map<UUID, Parents> parents = new HashMap<>();
        for (Row row : rows) {
            String kind = kind(row);
            if ("ready".equals(kind)) {
                JsonObject task = (JsonObject) row.getValue("task");
                ready.add(readyTask(row.getUUID("id"), task));
                JsonObject handed = task.getJsonObject("parents");
                if (handed != null) {
                    parents.put(
                            row.getUUID("id"),
                            new Parents(
                                    handed.getInteger("count"),
                                    handed.getLong("bytes"),
                                    handed.getString("values"),
                                    handed.getString("states")));
                }
            } else if ("cancelled".equals(kind)) {
                cancelled.add(row.getUUID("id"));
            } else if ("flow".equals(kind)) {
                ended.add(new Settled.FlowEnd(row.getUUID("id"), row.getString("state")));
            }
        }
        return ready.isEmpty() && cancelled.isEmpty() && ended.isEmpty()
                ? Settled.NOTHING
                : new Settled(ready, cancelled, ended, parents);
    }
}
