package dev.taskline.events;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.testing.GateHandler;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.SseClient;
import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import org.junit.jupiter.api.Test;

/** A browser on node B follows a task that runs on node A: state and progress arrive through the journal. */
class CrossNodeStreamTest {

    private static final String CONFIG = "{\"worker\": {\"progressIntervalMs\": 0}}";

    @Test
    void a_stream_on_another_node_sees_progress_and_the_end() throws Exception {
        GateHandler.reset();
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, CONFIG, new MutableClock());
                TestNode b = TestNode.start(db, CONFIG, new MutableClock())) {
            String id = a.post("/api/tasks", new JsonObject().put("type", "gate"))
                    .bodyAsJsonObject()
                    .getString("id");
            GateHandler.Call call = GateHandler.next(TestNode.WAIT);
            try (SseClient sse = SseClient.open(b.vertx, b.node.httpPort(), "/api/tasks/" + id + "/events", null)) {
                List<String> seen = new ArrayList<>();
                SseClient.Event event;
                do {
                    event = sse.next();
                    seen.add(event.event()
                            + (event.event().equals("state")
                                    ? ":" + event.data().getString("to")
                                    : ""));
                } while (!seen.contains("state:running"));

                call.progress(50, "half way");
                a.until("/api/tasks/" + id, t -> t.getJsonObject("progress").getInteger("percent") == 50);
                TestNode.await(b.node.passes().events().catchUp());
                event = sse.next();
                assertEquals("progress", event.event());
                assertEquals(50, event.data().getInteger("percent"));

                call.succeed(new JsonObject().put("done", true));
                a.waitForState(id, "succeeded");
                TestNode.await(b.node.passes().events().catchUp());
                List<String> rest = new ArrayList<>();
                for (SseClient.Event e : sse.untilEnd()) {
                    rest.add(e.event()
                            + (e.event().equals("state") ? ":" + e.data().getString("to") : ""));
                }
                assertEquals(List.of("state:succeeded", "result", "end"), rest);
            }
        }
    }
}
