package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.admission.Admitted;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.testing.MutableClock;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** The 202s are written as text; these pin them to the JSON the API documents, field order included. */
class ApiJsonTest {

    private static final MutableClock CLOCK = new MutableClock();
    private static final Instant NOW = Instant.parse("2026-12-01T09:00:00.123456Z");
    private static final String[] QUEUES = {"default", "q \"quoted\" \\ back", "ünï\u2028\u0001"};

    @Test
    void a_single_answer_shows_the_task_and_its_stream() {
        for (int i = 0; i < 6; i++) {
            Insert insert = insert(i);
            String url = "/api/tasks/" + insert.task().id() + "/events?token=a\"b";
            JsonObject expected = shape(insert).put("eventsUrl", url);
            String text = ApiJson.accepted(insert, url);
            assertEquals(expected, new JsonObject(text));
            assertEquals(expected.encode(), text);
        }
    }

    @Test
    void a_batch_answer_shows_each_task_as_a_single_answer_does() {
        List<Insert> inserts = new ArrayList<>();
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < 6; i++) {
            inserts.add(insert(i));
            tasks.add(shape(inserts.get(i)));
        }
        Admitted admitted = new Admitted(TaskIds.next(CLOCK), inserts, false);
        String url = "/api/batches/" + admitted.batchId() + "/events?token=a\"b";
        JsonObject expected = new JsonObject()
                .put("batchId", admitted.batchId().toString())
                .put("eventsUrl", url)
                .put("tasks", tasks);

        String text = ApiJson.acceptedBatch(admitted, url);
        assertEquals(expected, new JsonObject(text));
        assertEquals(expected.encode(), text);
    }

    /** Tasks of three queues (two needing escapes), half claimed, three sharing one runAt. */
    private static Insert insert(int i) {
        Instant runAt = i < 3 ? NOW : NOW.plusMillis(i * 1000L);
        Task task = Task.builder(TaskIds.next(CLOCK), QUEUES[i % 3], "type-" + i + "\t")
                .priority(i - 3)
                .runAt(runAt)
                .build();
        Insert insert = Insert.waiting(task, runAt);
        return i % 2 == 0 ? insert.claimedBy("w1", runAt.plusSeconds(30)) : insert;
    }

    /** The 202's task as the API documents it (the map the answers were once built from). */
    private static JsonObject shape(Insert insert) {
        Task task = insert.task();
        return new JsonObject()
                .put("id", task.id().toString())
                .put("state", insert.claimed() ? "running" : "pending")
                .put("queue", task.queue())
                .put("type", task.type())
                .put("priority", task.priority())
                .put("runAt", insert.runAt().toString());
    }
}
