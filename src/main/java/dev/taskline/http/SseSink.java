package dev.taskline.http;

import dev.taskline.events.StreamSink;
import io.vertx.core.Handler;
import io.vertx.core.Vertx;
import io.vertx.core.http.HttpServerResponse;
import io.vertx.core.json.JsonObject;

/**
 * Server-Sent Events over one response: {@code id:} carries the journal event id, a comment line
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
  public void send(String event, long eventId, JsonObject data) {
    if (closed) {
      return;
    }
    StringBuilder frame = new StringBuilder(64);
    if (eventId >= 0) {
      frame.append("id: ").append(eventId).append('\n');
    }
    // JSON text has no raw newlines, so one data line carries it.
    frame.append("event: ").append(event).append('\n').append("data: ").append(data.encode()).append("\n\n");
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
