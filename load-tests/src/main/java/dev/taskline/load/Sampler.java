package dev.taskline.load;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;

/**
 * Reads GET /api/stats and GET /api/queues once per second and checks, on every /api/stats sample
 * that has the fields, that {@code accepted - finished == waiting + running}. Every field may be
 * missing (older or newer servers): a missing field is recorded as null and not checked.
 */
final class Sampler {

  /** One reading; {@code t} is seconds from the start of the run when the reading was asked for. */
  record Sample(double t, Long accepted, Long finished, Long rejected, Long waiting, Long running,
      Long qWaiting, Long qRunning, Long qAccepted, Long qFinished, Long qRejected, Long qCapacity, Long qSlots,
      Double qCompletionRate, Long scheduled, Long qScheduled, double statsMillis) {

    Long qBacklog() {
      return qWaiting == null ? null : qWaiting + (qRunning == null ? 0 : qRunning);
    }
  }

  /**
   * The server's memory, from GET /metrics: heap in use (every heap pool, so it rises and falls with
   * each young collection) and the process's resident set size. Null where the server lacks a series.
   */
  record Memory(double t, Double heapBytes, Double rssBytes) {
  }

  /** Seconds between memory readings: GET /metrics costs the server 10 to 25 ms of CPU. */
  static final int MEMORY_EVERY = 5;

  private final Vertx vertx;
  private final Api api;
  private final String queue;
  private final long t0;
  final List<Sample> samples = new ArrayList<>();
  final List<Memory> memory = new ArrayList<>();
  long statsChecked;
  long statsHeld;
  long statsUncheckable;
  final List<String> statsViolations = new ArrayList<>();
  long queueChecked;
  long queueHeld;
  final List<String> queueViolations = new ArrayList<>();
  long failedReads;
  long skippedTicks;
  double maxStatsMillis;
  String lastError;
  private long timer = -1;
  private boolean busy;
  private long memoryTimer = -1;
  private boolean memoryBusy;

  Sampler(Vertx vertx, Api api, String queue, long t0Nanos) {
    this.vertx = vertx;
    this.api = api;
    this.queue = queue;
    this.t0 = t0Nanos;
  }

  void start() {
    tick();
    timer = vertx.setPeriodic(1_000, id -> tick());
    memoryTick();
    memoryTimer = vertx.setPeriodic(MEMORY_EVERY * 1_000L, id -> memoryTick());
  }

  void stop() {
    if (timer >= 0) {
      vertx.cancelTimer(timer);
      timer = -1;
    }
    if (memoryTimer >= 0) {
      vertx.cancelTimer(memoryTimer);
      memoryTimer = -1;
    }
  }

  Sample last() {
    return samples.isEmpty() ? null : samples.get(samples.size() - 1);
  }

  private void tick() {
    if (busy) {
      skippedTicks++;
      return;
    }
    busy = true;
    readOnce().onComplete(ar -> busy = false);
  }

  /** Its own timer: a slow GET /metrics must not hold up the stats samples, nor they it. */
  private void memoryTick() {
    if (!memoryBusy) {
      memoryBusy = true;
      readMemory().onComplete(ar -> memoryBusy = false);
    }
  }

  /** One memory reading now (kept only when the server answered). */
  Future<Void> readMemory() {
    double t = (System.nanoTime() - t0) / 1e9;
    return api.metrics().map(text -> {
      if (text != null) {
        memory.add(new Memory(t, PrometheusText.sum(text, "jvm_memory_used_bytes", "area=\"heap\""),
            PrometheusText.sum(text, "process_resident_memory_bytes", null)));
      }
      return null;
    });
  }

  /** The entry of queue {@code name} in a GET /api/queues answer, or null (no such queue, or no answer). */
  static JsonObject queueIn(Api.Reply reply, String name) {
    if (reply.status() != 200 || reply.json() == null) {
      return null;
    }
    JsonArray list = reply.json().getJsonArray("queues");
    if (list != null) {
      for (Object item : list) {
        if (item instanceof JsonObject q && name.equals(q.getString("name"))) {
          return q;
        }
      }
    }
    return null;
  }

  /** One reading now; also usable on its own (before and after a run). */
  Future<Sample> readOnce() {
    long asked = System.nanoTime();
    double t = (asked - t0) / 1e9;
    Future<Api.Reply> stats = api.get("/api/stats");
    Future<Api.Reply> queues = api.get("/api/queues");
    return Future.join(stats, queues).transform(ar -> {
      double millis = (System.nanoTime() - asked) / 1e6;
      JsonObject s = stats.succeeded() && stats.result().status() == 200 ? stats.result().json() : null;
      JsonObject q = queues.succeeded() ? queueIn(queues.result(), queue) : null;
      if (s == null || q == null) {
        failedReads++;
        lastError = stats.failed() ? stats.cause().toString()
            : queues.failed() ? queues.cause().toString()
            : s == null ? "GET /api/stats answered " + stats.result().status()
            : "queue '" + queue + "' not in GET /api/queues";
      }
      Sample sample = new Sample(t,
          num(s, "accepted"), num(s, "finished"), num(s, "rejected"), num(s, "waiting"), num(s, "running"),
          num(q, "waiting"), num(q, "running"), num(q, "accepted"), num(q, "finished"), num(q, "rejected"),
          num(q, "capacity"), num(q, "slots"), dbl(q, "completionRate"), num(s, "scheduled"),
          num(q, "scheduled"), millis);
      maxStatsMillis = Math.max(maxStatsMillis, millis);
      check(sample);
      samples.add(sample);
      return Future.succeededFuture(sample);
    });
  }

  private void check(Sample s) {
    if (s.accepted() != null && s.finished() != null && s.waiting() != null && s.running() != null) {
      statsChecked++;
      long left = s.accepted() - s.finished();
      long right = s.waiting() + s.running();
      if (left == right) {
        statsHeld++;
      } else if (statsViolations.size() < 10) {
        statsViolations.add(String.format("t=%.1fs accepted %d - finished %d = %d but waiting %d + running %d = %d%s",
            s.t(), s.accepted(), s.finished(), left, s.waiting(), s.running(), right,
            s.scheduled() == null ? "" : " (scheduled " + s.scheduled() + ")"));
      }
    } else {
      statsUncheckable++;
    }
    if (s.qAccepted() != null && s.qFinished() != null && s.qWaiting() != null && s.qRunning() != null) {
      queueChecked++;
      long left = s.qAccepted() - s.qFinished();
      long right = s.qWaiting() + s.qRunning();
      if (left == right) {
        queueHeld++;
      } else if (queueViolations.size() < 10) {
        queueViolations.add(String.format("t=%.1fs queue %s: accepted %d - finished %d = %d but waiting %d +"
            + " running %d = %d%s", s.t(), queue, s.qAccepted(), s.qFinished(), left, s.qWaiting(), s.qRunning(),
            right, s.qScheduled() == null ? "" : " (scheduled " + s.qScheduled() + ")"));
      }
    }
  }

  private static Long num(JsonObject o, String field) {
    if (o == null) {
      return null;
    }
    Object v = o.getValue(field);
    return v instanceof Number n ? n.longValue() : null;
  }

  private static Double dbl(JsonObject o, String field) {
    if (o == null) {
      return null;
    }
    Object v = o.getValue(field);
    return v instanceof Number n ? n.doubleValue() : null;
  }
}
