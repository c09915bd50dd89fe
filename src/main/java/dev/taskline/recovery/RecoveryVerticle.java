package dev.taskline.recovery;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.logging.Level;
import java.util.logging.Logger;

/** Runs {@link Recovery#runOnce} on a timer, one pass at a time. */
public final class RecoveryVerticle extends VerticleBase {

  private static final Logger LOG = Logger.getLogger(RecoveryVerticle.class.getName());

  private final Recovery recovery;
  private final long intervalMs;
  private long timer = -1;
  private boolean passRunning;

  public RecoveryVerticle(Recovery recovery, long intervalMs) {
    this.recovery = recovery;
    this.intervalMs = intervalMs;
  }

  @Override
  public Future<?> start() {
    timer = vertx.setPeriodic(intervalMs, id -> tick());
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    vertx.cancelTimer(timer);
    return Future.succeededFuture();
  }

  private void tick() {
    if (passRunning) {
      return;
    }
    passRunning = true;
    recovery.runOnce()
        .onFailure(e -> LOG.log(Level.WARNING, "recovery pass failed; will try again", e))
        .onComplete(done -> passRunning = false);
  }
}
