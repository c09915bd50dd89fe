package dev.taskline.metrics;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/**
 * accepted - finished = waiting + scheduled + running on every read, while the node is hammered
 * with submissions, retries, delays and 429s; and the Prometheus text carries the documented series.
 */
class StatsInvariantTest {

    @Test
    void the_counts_balance_on_every_sample_under_load() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), """
        {"queues": {"default": {"slots": 8, "capacity": 300, "backoffBaseMs": 0, "backoffCapMs": 0},
                    "other": {"slots": 2, "capacity": 50}}}
        """)) {
            List<Future<HttpResponse<Buffer>>> submissions = new ArrayList<>();
            for (int i = 0; i < 60; i++) {
                JsonArray tasks = new JsonArray();
                for (int j = 0; j < 10; j++) {
                    JsonObject payload = new JsonObject().put("ms", j % 3).put("failTimes", j % 4 == 0 ? 1 : 0);
                    JsonObject task = new JsonObject()
                            .put("type", "sleep")
                            .put("payload", payload)
                            .put("queue", j % 5 == 0 ? "other" : "default");
                    if (j == 7) {
                        task.put("delayMs", 1);
                    }
                    tasks.add(task);
                }
                submissions.add(node.http
                        .post("/api/batches")
                        .putHeader("Content-Type", "application/json")
                        .sendBuffer(Buffer.buffer(
                                new JsonObject().put("tasks", tasks).encode())));
            }
            int samples = 0;
            int accepted202 = 0;
            boolean allAnswered;
            do {
                allAnswered = submissions.stream().allMatch(Future::isComplete);
                JsonObject stats = node.getJson("/api/stats");
                assertBalanced(stats);
                for (Object q : node.getJson("/api/queues").getJsonArray("queues")) {
                    assertBalanced((JsonObject) q);
                }
                samples++;
            } while (!allAnswered || samples < 20);
            for (Future<HttpResponse<Buffer>> submission : submissions) {
                int status = submission.result().statusCode();
                assertTrue(status == 202 || status == 429, "only 202 or 429, got " + status);
                accepted202 += status == 202 ? 1 : 0;
            }
            assertTrue(accepted202 > 0);
            assertTrue(samples >= 20, "sampled " + samples + " times");

            String prometheus = node.get("/metrics").bodyAsString();
            for (String series : List.of(
                    "taskline_tasks_accepted_total{queue=\"default\"}",
                    "taskline_tasks_rejected_total{queue=\"default\",reason=\"queue_full\"}",
                    "taskline_tasks_started_total",
                    "taskline_tasks_succeeded_total",
                    "taskline_tasks_retried_total",
                    "taskline_queue_waiting{queue=\"other\"}",
                    "taskline_queue_lag_seconds",
                    "taskline_task_wait_seconds_count",
                    "taskline_task_run_seconds_count",
                    "taskline_accept_latency_seconds_count",
                    "taskline_journal_write_seconds_count{statement=\"claim\"}")) {
                assertTrue(prometheus.contains(series), "missing " + series);
            }
            if (Files.isReadable(Path.of("/proc/self/status"))) {
                assertTrue(node.metric("process_resident_memory_bytes") > 0, "the node's RSS is exported");
            }
        }
    }

    private static void assertBalanced(JsonObject counts) {
        long accepted = counts.getLong("accepted");
        long finished = counts.getLong("finished");
        long unfinished = counts.getLong("waiting") + counts.getLong("scheduled") + counts.getLong("running");
        assertEquals(accepted - finished, unfinished, counts.encode());
        assertEquals(unfinished, counts.getLong("unfinished"));
    }
}
