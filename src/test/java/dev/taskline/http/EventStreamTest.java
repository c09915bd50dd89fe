package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.testing.SseClient;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Server-Sent Events from the journal: order, completeness, resume, limits. */
class EventStreamTest {

    private static TestNode node;

    @BeforeAll
    static void start() throws Exception {
        node = TestNode.start(TestPostgres.newDatabase(), """
        {"http": {"maxStreams": 50}, "worker": {"progressIntervalMs": 0},
         "queues": {"default": {"slots": 3}}}
        """);
    }

    @AfterAll
    static void stop() throws Exception {
        node.close();
    }

    private static String batchOf(int n, int ms, int steps) throws Exception {
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < n; i++) {
            tasks.add(new JsonObject()
                    .put("type", "sleep")
                    .put("payload", new JsonObject().put("ms", ms).put("steps", steps)));
        }
        return node.post("/api/batches", new JsonObject().put("tasks", tasks))
                .bodyAsJsonObject()
                .getString("batchId");
    }

    /** Every journal event id of the batch's tasks, from their histories. */
    private static Set<Long> journalIds(String batchId) throws Exception {
        Set<Long> ids = new TreeSet<>();
        for (Object t : node.getJson("/api/batches/" + batchId).getJsonArray("tasks")) {
            for (Object e : node.getJson("/api/tasks/" + ((JsonObject) t).getString("id"))
                    .getJsonArray("history")) {
                ids.add(((JsonObject) e).getLong("eventId"));
            }
        }
        return ids;
    }

    @Test
    void a_batch_stream_shows_each_task_pending_running_progress_succeeded_in_order_each_event_once() throws Exception {
        String batch = batchOf(5, 200, 4);
        List<SseClient.Event> events;
        try (SseClient sse =
                SseClient.open(node.vertx, node.node.httpPort(), "/api/batches/" + batch + "/events", null)) {
            events = sse.untilEnd();
        }
        assertEquals("snapshot", events.get(0).event());
        assertEquals(5, events.get(0).data().getJsonArray("tasks").size());
        assertEquals("end", events.get(events.size() - 1).event());

        Map<String, List<String>> perTask = new HashMap<>();
        List<Long> stateIds = new ArrayList<>();
        Map<String, Integer> lastProgress = new HashMap<>();
        for (SseClient.Event event : events) {
            JsonObject data = event.data();
            switch (event.event()) {
                case "state" -> {
                    stateIds.add(event.id());
                    perTask.computeIfAbsent(data.getString("taskId"), k -> new ArrayList<>())
                            .add(data.getString("to"));
                }
                case "progress" -> {
                    String task = data.getString("taskId");
                    int percent = data.getInteger("percent");
                    assertTrue(percent >= lastProgress.getOrDefault(task, 0), "progress never goes back");
                    lastProgress.put(task, percent);
                    perTask.computeIfAbsent(task, k -> new ArrayList<>()).add("progress");
                }
                case "result" -> assertEquals(200, data.getJsonObject("result").getInteger("sleptMs"));
                default -> {}
            }
        }
        assertEquals(5, perTask.size());
        for (List<String> sequence : perTask.values()) {
            assertEquals("pending", sequence.get(0));
            assertEquals("running", sequence.get(1));
            assertEquals("succeeded", sequence.get(sequence.size() - 1));
            assertTrue(
                    sequence.subList(2, sequence.size() - 1).stream().allMatch("progress"::equals),
                    sequence.toString());
            assertTrue(sequence.contains("progress"), "progress was streamed: " + sequence);
        }
        List<Long> sorted = new ArrayList<>(new TreeSet<>(stateIds));
        assertEquals(sorted, stateIds, "state events come once each, in journal order");
        assertEquals(journalIds(batch), new TreeSet<>(stateIds), "every journaled transition, and only those");
    }

    @Test
    void a_resumed_stream_yields_exactly_the_missing_events() throws Exception {
        String batch = batchOf(3, 300, 3);
        List<Long> before = new ArrayList<>();
        try (SseClient sse =
                SseClient.open(node.vertx, node.node.httpPort(), "/api/batches/" + batch + "/events", null)) {
            SseClient.Event event;
            do {
                event = sse.next();
                if (event.id() >= 0 && event.event().equals("state")) {
                    before.add(event.id());
                }
            } while (before.size() < 4);
        }
        List<Long> after = new ArrayList<>();
        try (SseClient sse = SseClient.open(
                node.vertx, node.node.httpPort(), "/api/batches/" + batch + "/events", before.get(before.size() - 1))) {
            for (SseClient.Event event : sse.untilEnd()) {
                if (event.event().equals("state")) {
                    after.add(event.id());
                }
            }
        }
        Set<Long> union = new TreeSet<>(before);
        assertTrue(new HashSet<>(after).stream().noneMatch(before::contains), "no duplicate across the resume");
        assertEquals(after.size(), new HashSet<>(after).size());
        union.addAll(after);
        assertEquals(journalIds(batch), union, "no gap across the resume");
    }

    @Test
    void a_stream_of_a_finished_task_replays_its_history_and_ends() throws Exception {
        String id = node.post("/api/tasks", new JsonObject().put("type", "sleep"))
                .bodyAsJsonObject()
                .getString("id");
        node.waitForState(id, "succeeded");
        try (SseClient sse = SseClient.open(node.vertx, node.node.httpPort(), "/api/tasks/" + id + "/events", null)) {
            List<SseClient.Event> events = sse.untilEnd();
            assertEquals(
                    List.of("snapshot", "state", "state", "state", "result", "end"),
                    events.stream().map(SseClient.Event::event).toList());
        }
    }

    @Test
    void every_id_on_a_stream_is_unique_and_a_client_that_drops_repeats_still_sees_every_outcome() throws Exception {
        JsonArray tasks = new JsonArray()
                .add(new JsonObject().put("type", "sleep").put("payload", new JsonObject().put("ms", 50)))
                .add(new JsonObject()
                        .put("type", "sleep")
                        .put("payload", new JsonObject().put("failTimes", 1))
                        .put("maxAttempts", 1));
        String batch = node.post("/api/batches", new JsonObject().put("tasks", tasks))
                .bodyAsJsonObject()
                .getString("batchId");
        List<SseClient.Event> events;
        try (SseClient sse =
                SseClient.open(node.vertx, node.node.httpPort(), "/api/batches/" + batch + "/events", null)) {
            events = sse.untilEnd();
        }
        List<Long> ids =
                events.stream().map(SseClient.Event::id).filter(id -> id >= 0).toList();
        assertEquals(new HashSet<>(ids).size(), ids.size(), "no id twice: " + ids);
        assertTrue(
                events.stream().filter(e -> e.event().equals("result")).allMatch(e -> e.id() < 0),
                "a result event repeats its transition's outcome and carries no id of its own");

        // A client that de-duplicates by id keeps the first frame with each id and the frames that have none.
        Set<Long> seen = new HashSet<>();
        Map<String, JsonObject> outcomes = new HashMap<>();
        for (SseClient.Event event : events) {
            if (event.id() >= 0 && !seen.add(event.id())) {
                continue;
            }
            if (event.event().equals("state")
                    && Set.of("succeeded", "failed").contains(event.data().getString("to"))) {
                outcomes.put(event.data().getString("taskId"), event.data());
            }
        }
        assertEquals(2, outcomes.size(), "both terminal transitions: " + outcomes);
        long succeeded = outcomes.values().stream()
                .filter(o -> o.getString("to").equals("succeeded"))
                .peek(o -> assertEquals(
                        50, o.getJsonObject("result").getInteger("sleptMs"), "the result rides in the state event"))
                .count();
        assertEquals(1, succeeded);
        JsonObject failed = outcomes.values().stream()
                .filter(o -> o.getString("to").equals("failed"))
                .findFirst()
                .orElseThrow();
        assertTrue(failed.getJsonObject("error").getString("message").contains("planned failure"), failed.encode());
    }

    @Test
    void unknown_ids_get_404_and_streams_beyond_the_limit_get_503() throws Exception {
        assertEquals(
                404, SseClient.status(node.vertx, node.node.httpPort(), "/api/tasks/" + UUID.randomUUID() + "/events"));
        assertEquals(
                404,
                SseClient.status(node.vertx, node.node.httpPort(), "/api/batches/" + UUID.randomUUID() + "/events"));
        String gate = node.post(
                        "/api/tasks", new JsonObject().put("type", "sleep").put("delayMs", 3_600_000))
                .bodyAsJsonObject()
                .getString("id");
        List<SseClient> open = new ArrayList<>();
        try {
            for (int i = 0; i < 50; i++) {
                open.add(SseClient.open(node.vertx, node.node.httpPort(), "/api/tasks/" + gate + "/events", null));
            }
            assertEquals(503, SseClient.status(node.vertx, node.node.httpPort(), "/api/tasks/" + gate + "/events"));
        } finally {
            open.forEach(SseClient::close);
        }
    }
}
