package dev.taskline.journal;

import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import java.time.OffsetDateTime;
import java.util.UUID;

/** The JSON shape of a task and its history, as the API shows them. */
final class TaskRows {

  private TaskRows() {
  }

  static JsonObject toJson(Row row) {
    JsonObject task = new JsonObject()
        .put("id", row.getUUID("id").toString())
        .put("queue", row.getString("queue"))
        .put("type", row.getString("type"))
        .put("state", row.getString("state"))
        .put("priority", row.getInteger("priority"))
        .put("attempt", row.getInteger("attempt"))
        .put("maxAttempts", row.getInteger("max_attempts"))
        .put("leaseVersion", row.getLong("lease_version"))
        .put("payload", row.getValue("payload"))
        .put("result", row.getValue("result"))
        .put("error", row.getValue("error"))
        .put("progress", new JsonObject()
            .put("percent", row.getValue("progress_percent") == null ? 0 : row.getInteger("progress_percent"))
            .put("message", row.getString("progress_message")))
        .put("runAt", time(row.getOffsetDateTime("run_at")))
        .put("createdAt", time(row.getOffsetDateTime("created_at")))
        .put("updatedAt", time(row.getOffsetDateTime("updated_at")))
        .put("startedAt", time(row.getOffsetDateTime("started_at")))
        .put("finishedAt", time(row.getOffsetDateTime("finished_at")));
    UUID batchId = row.getUUID("batch_id");
    if (batchId != null) {
      task.put("batchId", batchId.toString());
    }
    String tenant = row.getString("tenant");
    if (tenant != null) {
      task.put("tenant", tenant);
    }
    Long timeout = row.getLong("timeout_ms");
    if (timeout != null) {
      task.put("timeoutMs", timeout);
    }
    String worker = row.getString("worker_id");
    if (worker != null) {
      task.put("workerId", worker);
      task.put("leaseExpiresAt", time(row.getOffsetDateTime("lease_expires_at")));
    }
    return task;
  }

  static JsonArray history(RowSet<Row> rows) {
    JsonArray events = new JsonArray();
    for (Row row : rows) {
      JsonObject event = new JsonObject()
          .put("eventId", row.getLong("event_id"))
          .put("from", row.getString("from_state"))
          .put("to", row.getString("to_state"))
          .put("reason", row.getString("reason"))
          .put("at", time(row.getOffsetDateTime("at")));
      if (row.getString("worker_id") != null) {
        event.put("workerId", row.getString("worker_id"));
      }
      if (row.getValue("lease_version") != null) {
        event.put("leaseVersion", row.getLong("lease_version"));
      }
      if (row.getValue("attempt") != null) {
        event.put("attempt", row.getInteger("attempt"));
      }
      if (row.getValue("detail") != null) {
        event.put("detail", row.getValue("detail"));
      }
      events.add(event);
    }
    return events;
  }

  private static String time(OffsetDateTime time) {
    return time == null ? null : time.toInstant().toString();
  }
}
