package dev.taskline.events;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;

/** Runs {@link EventHub#catchUp} on a timer, one pass at a time. */
public final class CatchUpVerticle extends VerticleBase {

  private final EventHub hub;
  private final long intervalMs;
  private long timer = -1;
  private boolean running;

  public CatchUpVerticle(EventHub hub, long intervalMs) {
    this.hub = hub;
    this.intervalMs = intervalMs;
  }

  @Override
  public Future<?> start() {
    timer = vertx.setPeriodic(intervalMs, id -> {
      if (!running) {
        running = true;
        hub.catchUp().onComplete(done -> running = false);
      }
    });
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(timer);
    return Future.succeededFuture();
  }
}
