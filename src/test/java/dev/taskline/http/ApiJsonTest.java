package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.admission.Admitted;
import dev.taskline.journal.Insert;
import dev.taskline.journal.Task;
import dev.taskline.journal.TaskIds;
import dev.taskline.testing.MutableClock;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

class ApiJsonTest {

  @Test
  void a_batch_answer_shows_each_task_as_a_single_answer_does() {
    MutableClock clock = new MutableClock();
    Instant now = Instant.parse("2026-12-01T09:00:00.123456Z");
    List<Insert> inserts = new ArrayList<>();
    String[] queues = {"default", "q \"quoted\" \\ back", "ünï\u2028\u0001"};
    for (int i = 0; i < 6; i++) {
      Instant runAt = i < 3 ? now : now.plusMillis(i * 1000L);
      Task task = Task.builder(TaskIds.next(clock), queues[i % 3], "type-" + i + "\t").priority(i - 3).runAt(runAt).build();
      Insert insert = Insert.waiting(task, runAt);
      inserts.add(i % 2 == 0 ? insert.claimedBy("w1", runAt.plusSeconds(30)) : insert);
    }
    Admitted admitted = new Admitted(TaskIds.next(clock), inserts, false);
    String url = "/api/batches/" + admitted.batchId() + "/events?token=a\"b";

    JsonArray tasks = new JsonArray();
    inserts.forEach(insert -> tasks.add(ApiJson.accepted(insert)));
    JsonObject expected = new JsonObject().put("batchId", admitted.batchId().toString()).put("eventsUrl", url)
        .put("tasks", tasks);

    String text = ApiJson.acceptedBatch(admitted, url);
    assertEquals(expected, new JsonObject(text));
    assertEquals(expected.encode(), text, "the same text, field order included");
  }
}
