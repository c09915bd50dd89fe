package dev.taskline.load;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;

/**
 * The closed loop of the benchmark and of the calibration: {@code concurrency} submitters, each
 * sending its next request as soon as the previous one is answered, until the end time. A 429
 * makes that submitter pause briefly, an error a little longer. Being closed, it measures how fast
 * the server accepts work, not latency under a given arrival rate (latency here is from the actual
 * send; use the open scenarios for latency under load). After a 429 a submitter waits, starting at
 * {@code pauseOn429Ms} and doubling up to 16 times that while the 429s go on, so that a full queue
 * is kept full without spending the server's time on refusals.
 */
final class ClosedGenerator extends Submitter {

  private final Vertx vertx;
  private final Api api;
  private final Buffer body;
  private final int concurrency;
  private final long endNanos;
  private final long pauseOn429Ms;
  private final Promise<Void> done = Promise.promise();
  private int live;
  private int inFlight;

  ClosedGenerator(Vertx vertx, Api api, Options options, Recorder recorder, Follower follower, long t0Nanos,
      int concurrency, long endNanosAbs, long pauseOn429Ms) {
    super(options, recorder, follower, t0Nanos);
    this.vertx = vertx;
    this.api = api;
    this.body = api.submitBody();
    this.concurrency = concurrency;
    this.endNanos = endNanosAbs;
    this.pauseOn429Ms = pauseOn429Ms;
  }

  Future<Void> run() {
    live = concurrency;
    for (int i = 0; i < concurrency; i++) {
      next(new long[] {pauseOn429Ms});
    }
    return done.future();
  }

  private void next(long[] pause) {
    long now = System.nanoTime();
    if (now >= endNanos || recorder.sentRequests >= options.maxRequests) {
      if (--live == 0) {
        done.tryComplete();
      }
      return;
    }
    double at = (now - t0) / 1e9;
    recorder.offered(at);
    inFlight++;
    recorder.sent(at, 0, inFlight);
    api.submit(body).onComplete(ar -> {
      inFlight--;
      int status = record(ar, now);
      if (status == 429) {
        long wait = pause[0];
        pause[0] = Math.min(pause[0] * 2, pauseOn429Ms * 16);
        vertx.setTimer(wait, id -> next(pause));
      } else if (status < 0 || status >= 500) {
        vertx.setTimer(100, id -> next(pause));
      } else {
        pause[0] = pauseOn429Ms;
        next(pause);
      }
    });
  }
}
