package dev.taskline.flow;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Reads the journal's queue switches on a timer, so that one set through any node holds on this one within a second. */
public final class FlowVerticle extends VerticleBase {

  private static final Logger LOG = Logger.getLogger(FlowVerticle.class.getName());

  private final QueuePauses pauses;
  private final long intervalMs;
  private long timer = -1;
  private boolean warned;

  public FlowVerticle(QueuePauses pauses, long intervalMs) {
    this.pauses = pauses;
    this.intervalMs = intervalMs;
  }

  @Override
  public Future<?> start() {
    timer = vertx.setPeriodic(intervalMs, id -> pauses.runOnce()
        .onSuccess(v -> warned = false)
        .onFailure(e -> {
          // A journal that does not answer keeps the switches last read; say so once per outage.
          if (!warned) {
            warned = true;
            LOG.log(Level.WARNING, "cannot read the queue switches; keeping those last read: " + e.getMessage());
          }
        }));
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(timer);
    return Future.succeededFuture();
  }
}
