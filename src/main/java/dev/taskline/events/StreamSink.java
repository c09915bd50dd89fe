package dev.taskline.events;

import io.vertx.core.Handler;
import io.vertx.core.json.JsonObject;

/** Where a {@link TaskStream} writes; the HTTP layer renders it as Server-Sent Events. */
public interface StreamSink {

  /** @param eventId the journal event id, or -1 for events that are not journaled (progress, snapshot) */
  void send(String event, long eventId, JsonObject data);

  /** A write buffer that is full asks the stream to wait; state events stay in the journal meanwhile. */
  boolean full();

  /** Called once when the buffer has room again. */
  void onDrain(Handler<Void> handler);

  void close();
}
