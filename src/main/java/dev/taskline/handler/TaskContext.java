package dev.taskline.handler;

import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.util.UUID;

/** What a handler knows about the attempt it runs. */
public interface TaskContext {

  UUID taskId();

  /** 1 for the first attempt; grows with each claim of the task. */
  int attempt();

  JsonObject payload();

  /** For timers and other non-blocking work; never block its event loop. */
  Vertx vertx();

  /**
   * Reports progress. Cheap to call often: the latest value is kept and written to the journal at a
   * bounded rate, and only while this attempt still holds its lease.
   */
  void progress(int percent, String message);
}
