package dev.taskline.http;

import dev.taskline.events.StreamSink;
import dev.taskline.model.Event;
import dev.taskline.model.TaskSnapshot;
import dev.taskline.model.TaskState;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;

/**
 * Server-Sent Events over one response: {@code id:} carries the journal event id of a transition
 * and appears on nothing else, so every id on a stream is unique; a comment line
 * every 15 s keeps proxies from closing an idle stream, and the write queue is bounded so a slow
 * client holds little memory (the stream waits, and the journal keeps what it has not read).
 */
final class SseSink implements StreamSink {

    static final long HEARTBEAT_MS = 15_000;
    static final long RETRY_MS = 2_000;
    private static final int WRITE_QUEUE_BYTES = 64 * 1024;

    private final Vertx vertx;
    private final HttpServerResponse response;
    private final long heartbeat;
    private boolean closed;

    SseSink(Vertx vertx, HttpServerResponse response) {
        this.vertx = vertx;
        this.response = response;
        response.setChunked(true)
                .setWriteQueueMaxSize(WRITE_QUEUE_BYTES)
                .putHeader("Content-Type", "text/event-stream; charset=utf-8")
                .putHeader("Cache-Control", "no-cache")
                .putHeader("X-Accel-Buffering", "no");
        response.write("retry: " + RETRY_MS + "\n\n");
        this.heartbeat = vertx.setPeriodic(HEARTBEAT_MS, id -> {
            if (!closed && !response.writeQueueFull()) {
                response.write(": keep-alive\n\n");
            }
        });
    }

    @Override
    public void snapshot(List<TaskSnapshot> tasks) {
        send("snapshot", -1, ApiJson.snapshot(tasks));
    }

    /**
     * A transition, named {@code state}; a durable step's, {@code step} (the task stays running),
     * and a suspend's and resume's, {@code suspended} and {@code resumed}, with the same fields.
     */
    @Override
    public void state(Event event, Object result, Object error) {
        String name = event.reason() == null
                ? "state"
                : switch (event.reason()) {
                    case STEP_COMPLETED -> "step";
                    case SUSPENDED -> "suspended";
                    case RESUMED -> "resumed";
                    default -> "state";
                };
        send(name, event.eventId(), ApiJson.stateEvent(event, result, error));
    }

    @Override
    public void result(UUID taskId, TaskState state, Object result, Object error) {
        send("result", -1, ApiJson.resultEvent(taskId, state, result, error));
    }

    @Override
    public void progress(UUID taskId, int percent, String message) {
        send("progress", -1, ApiJson.progressEvent(taskId, percent, message));
    }

    @Override
    public void end() {
        send("end", -1, new JsonObject());
    }

    /** @param eventId the journal event id, or -1 for what is not a journaled transition */
    private void send(String event, long eventId, JsonObject data) {
        if (closed) {
            return;
        }
        StringBuilder frame = new StringBuilder(64);
        if (eventId >= 0) {
            frame.append("id: ").append(eventId).append('\n');
        }
        // JSON text has no raw newlines, so one data line carries it.
        frame.append("event: ")
                .append(event)
                .append('\n')
                .append("data: ")
                .append(data.encode())
                .append("\n\n");
        response.write(frame.toString());
    }

    @Override
    public boolean full() {
        return response.writeQueueFull();
    }

    @Override
    public void onDrain(Handler<Void> handler) {
        response.drainHandler(handler);
    }

    @Override
    public void close() {
        if (!closed) {
            closed = true;
            vertx.cancelTimer(heartbeat);
            if (!response.ended() && !response.closed()) {
                response.end();
            }
        }
    }

    /** Stops the heartbeat when the client went away first. */
    void clientGone() {
        closed = true;
        vertx.cancelTimer(heartbeat);
    }
}
