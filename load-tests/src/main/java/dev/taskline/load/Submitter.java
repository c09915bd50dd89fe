package dev.taskline.load;

import io.vertx.core.AsyncResult;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpResponse;

/** Turns the answer to one load request into counts, latencies and tasks to follow. */
class Submitter {

  protected final Options options;
  protected final Recorder recorder;
  protected final Follower follower;
  protected final long t0;

  Submitter(Options options, Recorder recorder, Follower follower, long t0Nanos) {
    this.options = options;
    this.recorder = recorder;
    this.follower = follower;
    this.t0 = t0Nanos;
  }

  /**
   * Records one answer. {@code fromNanos} is when the request should have been sent (open model)
   * or was sent (closed loop); the latency runs from there to now. Returns the status, or -1 when
   * there was no answer.
   */
  int record(AsyncResult<HttpResponse<Buffer>> ar, long fromNanos) {
    return record(ar, fromNanos, fromNanos);
  }

  /** As above, with the actual send time as well when it differs from the planned one. */
  int record(AsyncResult<HttpResponse<Buffer>> ar, long fromNanos, long sentNanos) {
    long now = System.nanoTime();
    double at = (now - t0) / 1e9;
    if (ar.failed()) {
      recorder.failed(at, ar.cause());
      recorder.problem(String.format("t=%.1fs no answer: %s", at, ar.cause()));
      return -1;
    }
    HttpResponse<Buffer> response = ar.result();
    int status = response.statusCode();
    int tasks = options.batch;
    if (status == 202) {
      tasks = accepted(response, at);
    } else if (status != 429) {
      Buffer body = response.body();
      String text = body == null ? "" : body.toString();
      recorder.problem(String.format("t=%.1fs status %d: %s", at, status,
          text.length() > 300 ? text.substring(0, 300) + "..." : text));
    }
    recorder.answered(at, status, (now - fromNanos) / 1_000, (now - sentNanos) / 1_000, tasks);
    return status;
  }

  private int accepted(HttpResponse<Buffer> response, double at) {
    JsonObject json;
    try {
      json = response.bodyAsJsonObject();
    } catch (RuntimeException e) {
      json = null;
    }
    if (json == null) {
      recorder.problem(String.format("t=%.1fs 202 without a JSON body", at));
      return options.batch;
    }
    if (options.batch == 1) {
      String id = json.getString("id");
      if (id == null) {
        recorder.problem(String.format("t=%.1fs 202 without an id: %s", at, json.encode()));
      } else {
        follower.acceptedTask(id);
      }
      return 1;
    }
    String batchId = json.getString("batchId");
    JsonArray list = json.getJsonArray("tasks");
    int size = list == null ? options.batch : list.size();
    if (batchId == null) {
      recorder.problem(String.format("t=%.1fs 202 without a batchId", at));
    } else {
      follower.acceptedBatch(batchId, size);
    }
    if (size != options.batch) {
      recorder.problem(String.format("t=%.1fs batch %s accepted %d tasks, %d sent", at, batchId, size,
          options.batch));
    }
    return size;
  }
}
