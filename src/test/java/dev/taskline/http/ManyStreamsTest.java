package dev.taskline.http;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Two thousand idle streams on one node cost no thread each, and all hear the one change. */
class ManyStreamsTest {

    private static final int STREAMS = 2_000;

    @Test
    void two_thousand_idle_streams_hold_and_all_see_the_end() throws Exception {
        try (TestNode node = TestNode.start(TestPostgres.newDatabase(), "{\"http\": {\"maxStreams\": 2500}}")) {
            String id = node.post(
                            "/api/tasks", new JsonObject().put("type", "sleep").put("delayMs", 3_600_000))
                    .bodyAsJsonObject()
                    .getString("id");
            HttpClient client = node.vertx.createHttpClient(
                    new HttpClientOptions().setDefaultHost("127.0.0.1").setDefaultPort(node.node.httpPort()),
                    new PoolOptions().setHttp1MaxSize(STREAMS + 10));
            AtomicInteger ended = new AtomicInteger();
            AtomicInteger snapshots = new AtomicInteger();
            List<Future<Void>> opened = new ArrayList<>();
            List<Promise<Void>> finished = new ArrayList<>();
            for (int i = 0; i < STREAMS; i++) {
                Promise<Void> open = Promise.promise();
                Promise<Void> done = Promise.promise();
                opened.add(open.future());
                finished.add(done);
                StringBuilder text = new StringBuilder();
                client.request(HttpMethod.GET, "/api/tasks/" + id + "/events")
                        .compose(request -> request.send())
                        .onSuccess(response -> {
                            if (response.statusCode() != 200) {
                                open.fail("status " + response.statusCode());
                                return;
                            }
                            response.handler(chunk -> {
                                text.append(chunk);
                                if (text.indexOf("event: snapshot") >= 0
                                        && !open.future().isComplete()) {
                                    snapshots.incrementAndGet();
                                    open.complete();
                                }
                            });
                            response.endHandler(v -> {
                                if (text.indexOf("event: end") >= 0) {
                                    ended.incrementAndGet();
                                }
                                done.tryComplete();
                            });
                        })
                        .onFailure(open::tryFail);
            }
            TestNode.await(Future.all(opened));
            assertEquals(STREAMS, snapshots.get());
            assertEquals(200, node.get("/health/live").statusCode(), "the node still answers");
            assertEquals(
                    202,
                    node.post("/api/tasks", new JsonObject().put("type", "sleep"))
                            .statusCode());

            assertEquals(
                    202,
                    node.post("/api/tasks/" + id + "/cancel", new JsonObject()).statusCode());
            TestNode.await(Future.all(finished.stream().map(Promise::future).toList()));
            assertEquals(STREAMS, ended.get(), "every stream saw the cancellation and its end");
            TestNode.await(client.close());
        }
    }
}
