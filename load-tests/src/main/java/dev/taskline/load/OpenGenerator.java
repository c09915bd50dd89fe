package dev.taskline.load;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

/**
 * The open model: request {@code i} is due at its planned time whatever happened to the requests
 * before it. A timer wakes every millisecond and sends everything that is due; if it wakes late,
 * it sends the overdue requests at once rather than shifting the plan. Latency is measured from the
 * planned time, so a slow server cannot hide its stalls by slowing the generator (no coordinated
 * omission). When {@code --max-in-flight} requests are open, a due request is not sent and is
 * counted as dropped by the client; the plan goes on.
 */
final class OpenGenerator extends Submitter {

  private final Vertx vertx;
  private final Api api;
  private final Schedule schedule;
  private final Buffer body;
  private final Promise<Void> done = Promise.promise();
  private long timer;
  private long next;
  private long planned;
  private int inFlight;
  private boolean planOver;

  OpenGenerator(Vertx vertx, Api api, Options options, Recorder recorder, Follower follower, Schedule schedule,
      long t0Nanos) {
    super(options, recorder, follower, t0Nanos);
    this.vertx = vertx;
    this.api = api;
    this.schedule = schedule;
    this.body = api.submitBody();
  }

  /** Runs the plan; completes when it is over and every sent request has its answer. */
  Future<Void> run() {
    next = schedule.next();
    timer = vertx.setPeriodic(1, id -> tick());
    tick();
    return done.future();
  }

  private void tick() {
    if (planOver) {
      return;
    }
    long now = System.nanoTime() - t0;
    while (next >= 0 && next <= now) {
      double plannedSeconds = next / 1e9;
      if (planned >= options.maxRequests) {
        next = -1;
        break;
      }
      planned++;
      recorder.offered(plannedSeconds);
      if (inFlight >= options.maxInFlight) {
        recorder.dropped(plannedSeconds);
      } else {
        send(next, now);
      }
      next = schedule.next();
    }
    if (next < 0) {
      planOver = true;
      vertx.cancelTimer(timer);
      if (inFlight == 0) {
        done.tryComplete();
      }
    }
  }

  private void send(long plannedNanos, long nowNanos) {
    inFlight++;
    recorder.sent(plannedNanos / 1e9, nowNanos - plannedNanos, inFlight);
    long plannedAbs = t0 + plannedNanos;
    long sentAbs = t0 + nowNanos;
    api.submit(body).onComplete(ar -> {
      inFlight--;
      record(ar, plannedAbs, sentAbs);
      if (planOver && inFlight == 0) {
        done.tryComplete();
      }
    });
  }
}
