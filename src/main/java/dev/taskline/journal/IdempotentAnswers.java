package dev.taskline.journal;

import dev.taskline.model.IdempotentAnswer;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Row;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/** How an {@link IdempotentAnswer} is kept in {@code idempotency_keys}, and read back. */
final class IdempotentAnswers {

    /**
     * A key whose owner was seen but whose row could not be read back (it expired in between): it
     * matches no request.
     */
    static final IdempotentAnswer VANISHED = new IdempotentAnswer(null, null, List.of());

    private IdempotentAnswers() {}

    /**
     * The stored form ({@code idempotency_keys.response}, jsonb): the journal's own encoding, which
     * keys written by earlier versions share.
     */
    static JsonObject stored(List<Insert> inserts) {
        JsonArray list = new JsonArray();
        for (Insert insert : inserts) {
            Task task = insert.task();
            JsonObject stored = new JsonObject()
                    .put("id", task.id().toString())
                    .put("queue", task.queue())
                    .put("type", task.type())
                    .put("priority", task.priority())
                    .put("runAt", insert.runAt().toString());
            if (insert.startBy() != null) {
                stored.put("startBy", insert.startBy().toString());
            }
            list.add(stored);
        }
        UUID batchId = inserts.get(0).task().batchId();
        return new JsonObject()
                .put("batchId", batchId == null ? null : batchId.toString())
                .put("tasks", list);
    }

    static IdempotentAnswer fromRow(Row row) {
        JsonObject stored = (JsonObject) row.getValue("response");
        String batch = stored.getString("batchId");
        UUID batchId = batch == null ? null : UUID.fromString(batch);
        List<Insert> tasks = new ArrayList<>();
        for (Object item : stored.getJsonArray("tasks")) {
            JsonObject task = (JsonObject) item;
            Instant runAt = Instant.parse(task.getString("runAt"));
            String startBy = task.getString("startBy");
            tasks.add(Insert.waiting(
                    Task.builder(UUID.fromString(task.getString("id")), task.getString("queue"), task.getString("type"))
                            .payloadJson(null)
                            .priority(task.getInteger("priority"))
                            .runAt(runAt)
                            .batch(batchId)
                            .build(),
                    runAt,
                    startBy == null ? null : Instant.parse(startBy)));
        }
        return new IdempotentAnswer(row.getString("request_hash"), batchId, tasks);
    }
}
