package dev.taskline.load;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.HttpRequest;
import io.vertx.ext.web.client.HttpResponse;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;

/**
 * The two HTTP clients: one for the load itself (many connections), one for the control traffic
 * (stats samples, following tasks) on its own few connections, so that samples are not queued
 * behind the load. Both only ever talk to the loopback address the options resolved.
 */
final class Api {

  /** A control answer: the status and, when the body was JSON, the body. */
  record Reply(int status, JsonObject json, String text) {
  }

  private final Options options;
  private final WebClient load;
  private final WebClient control;
  private final String tasksPath;
  private final String batchesPath;

  Api(Vertx vertx, Options options) {
    this.options = options;
    WebClientOptions common = new WebClientOptions()
        .setDefaultHost(options.host)
        .setDefaultPort(options.port)
        .setFollowRedirects(false)
        .setTcpNoDelay(true)
        .setKeepAlive(true)
        .setUserAgent("taskline-load-tests");
    this.load = WebClient.create(vertx, new WebClientOptions(common),
        new PoolOptions().setHttp1MaxSize(options.connections).setMaxWaitQueueSize(-1));
    this.control = WebClient.create(vertx, new WebClientOptions(common),
        new PoolOptions().setHttp1MaxSize(16).setMaxWaitQueueSize(-1));
    this.tasksPath = options.basePath + "/api/tasks";
    this.batchesPath = options.basePath + "/api/batches";
  }

  /** The body every load request sends: the same sleep task(s), built once. */
  Buffer submitBody() {
    JsonObject task = new JsonObject().put("type", "sleep").put("queue", options.queue)
        .put("payload", options.payloadJson.copy());
    if (options.batch == 1) {
      return task.toBuffer();
    }
    JsonArray tasks = new JsonArray();
    for (int i = 0; i < options.batch; i++) {
      tasks.add(task.copy());
    }
    return new JsonObject().put("tasks", tasks).toBuffer();
  }

  /** One load request: POST /api/tasks (batch 1) or POST /api/batches. */
  Future<HttpResponse<Buffer>> submit(Buffer body) {
    return send(load.post(options.batch == 1 ? tasksPath : batchesPath), body);
  }

  /** One single-task submission on the control client (idle-latency). */
  Future<HttpResponse<Buffer>> submitSingle(Buffer body) {
    return send(control.post(tasksPath), body);
  }

  private HttpRequest<Buffer> authorized(HttpRequest<Buffer> request) {
    return options.key == null ? request : request.putHeader("Authorization", "Bearer " + options.key);
  }

  private Future<HttpResponse<Buffer>> send(HttpRequest<Buffer> request, Buffer body) {
    authorized(request).putHeader("Content-Type", "application/json").timeout(options.requestTimeoutMs);
    if (options.tenant != null) {
      request.putHeader("Taskline-Tenant", options.tenant);
    }
    return request.sendBuffer(body);
  }

  /** A GET /health/live on the load client: opens connections and warms the code paths, changes nothing. */
  Future<Reply> warm() {
    return load.get(options.basePath + "/health/live").timeout(5_000).send().map(Api::reply);
  }

  /** A GET on the control client; {@code pathAndQuery} starts with /api. */
  Future<Reply> get(String pathAndQuery) {
    return authorized(control.get(options.basePath + pathAndQuery))
        .timeout(Math.min(options.requestTimeoutMs, 30_000))
        .send()
        .map(Api::reply);
  }

  /** The server's GET /metrics text, or null when it did not answer 200; never fails. */
  Future<String> metrics() {
    return get("/metrics").transform(ar -> Future.succeededFuture(
        ar.succeeded() && ar.result().status() == 200 ? ar.result().text() : null));
  }

  static Reply reply(HttpResponse<Buffer> response) {
    Buffer body = response.body();
    String text = body == null ? "" : body.toString();
    JsonObject json = null;
    if (!text.isEmpty() && text.charAt(0) == '{') {
      try {
        json = new JsonObject(text);
      } catch (RuntimeException e) {
        json = null;
      }
    }
    return new Reply(response.statusCode(), json, text);
  }

  void close() {
    load.close();
    control.close();
  }
}
