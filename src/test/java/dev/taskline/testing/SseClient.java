package dev.taskline.testing;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/** A minimal Server-Sent Events reader for tests: frames arrive on a queue the test takes from. */
public final class SseClient implements AutoCloseable {

    /** One event: {@code id} is -1 when the frame had none. */
    public record Event(long id, String event, JsonObject data) {}

    private final BlockingQueue<Event> events = new LinkedBlockingQueue<>();
    private final StringBuilder buffer = new StringBuilder();
    private final HttpClient client;
    private HttpClientResponse response;
    private volatile boolean ended;

    private SseClient(HttpClient client) {
        this.client = client;
    }

    /** Opens a stream; fails when the answer is not 200. */
    public static SseClient open(Vertx vertx, int port, String path, Long lastEventId) throws Exception {
        return open(vertx, port, path, lastEventId, java.util.Map.of());
    }

    /** As {@link #open(Vertx, int, String, Long)}, with these headers (an Authorization, say). */
    public static SseClient open(
            Vertx vertx, int port, String path, Long lastEventId, java.util.Map<String, String> headers)
            throws Exception {
        HttpClient client = vertx.createHttpClient();
        SseClient sse = new SseClient(client);
        RequestOptions options = new RequestOptions()
                .setMethod(HttpMethod.GET)
                .setHost("127.0.0.1")
                .setPort(port)
                .setURI(path)
                .putHeader("Accept", "text/event-stream");
        if (lastEventId != null) {
            options.putHeader("Last-Event-ID", Long.toString(lastEventId));
        }
        headers.forEach(options::putHeader);
        Promise<Void> opened = Promise.promise();
        client.request(options).compose(request -> request.send()).onComplete(done -> {
            if (done.failed()) {
                opened.fail(done.cause());
                return;
            }
            HttpClientResponse response = done.result();
            sse.response = response;
            if (response.statusCode() != 200) {
                opened.fail("status " + response.statusCode());
                return;
            }
            response.handler(chunk -> sse.feed(chunk.toString()));
            response.endHandler(v -> sse.ended = true);
            opened.complete();
        });
        TestNode.await(opened.future());
        return sse;
    }

    /**
     * The status a request gets, for endpoints expected to refuse. A refusal's body is read; a
     * stream that opens (200) is answered at once and dropped, not waited on: it never ends.
     */
    public static int status(Vertx vertx, int port, String path) throws Exception {
        return status(vertx, port, path, java.util.Map.of());
    }

    /** As {@link #status(Vertx, int, String)}, with these headers. */
    public static int status(Vertx vertx, int port, String path, java.util.Map<String, String> headers)
            throws Exception {
        HttpClient client = vertx.createHttpClient();
        try {
            RequestOptions options = new RequestOptions()
                    .setMethod(HttpMethod.GET)
                    .setHost("127.0.0.1")
                    .setPort(port)
                    .setURI(path);
            headers.forEach(options::putHeader);
            Future<Integer> status = client.request(options)
                    .compose(request -> request.send())
                    .compose(response -> response.statusCode() == 200
                            ? Future.succeededFuture(200)
                            : response.body().map(body -> response.statusCode()));
            return TestNode.await(status);
        } finally {
            client.close();
        }
    }

    private synchronized void feed(String text) {
        buffer.append(text);
        int end;
        while ((end = buffer.indexOf("\n\n")) >= 0) {
            String frame = buffer.substring(0, end);
            buffer.delete(0, end + 2);
            long id = -1;
            String event = "message";
            String data = null;
            for (String line : frame.split("\n")) {
                if (line.startsWith("id: ")) {
                    id = Long.parseLong(line.substring(4));
                } else if (line.startsWith("event: ")) {
                    event = line.substring(7);
                } else if (line.startsWith("data: ")) {
                    data = line.substring(6);
                }
            }
            if (data != null) {
                events.add(new Event(id, event, new JsonObject(data)));
            }
        }
    }

    /** The next event, waiting at most the test timeout. */
    public Event next() throws InterruptedException {
        Event event = events.poll(TestNode.WAIT.toMillis(), TimeUnit.MILLISECONDS);
        if (event == null) {
            throw new AssertionError("no event within " + TestNode.WAIT);
        }
        return event;
    }

    /** Every event up to and including {@code end}. */
    public List<Event> untilEnd() throws InterruptedException {
        List<Event> all = new ArrayList<>();
        Event event;
        do {
            event = next();
            all.add(event);
        } while (!event.event().equals("end"));
        return all;
    }

    public boolean ended() {
        return ended;
    }

    @Override
    public void close() {
        if (response != null) {
            response.request().connection().close();
        }
        client.close();
    }
}
