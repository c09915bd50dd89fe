package dev.taskline.http;

import dev.taskline.admission.Admission;
import dev.taskline.admission.Admitted;
import dev.taskline.admission.Control;
import dev.taskline.config.TasklineConfig;
import dev.taskline.events.EventHub;
import dev.taskline.events.TaskStream;
import io.vertx.core.http.HttpServerResponse;
import dev.taskline.journal.Journal;
import dev.taskline.journal.NewTask;
import dev.taskline.journal.TaskState;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.queue.QueueRegistry;
import dev.taskline.queue.TaskQueue;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.WorkerExecutor;
import io.vertx.core.http.HttpServer;
import io.vertx.core.http.HttpServerOptions;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import io.vertx.ext.web.handler.StaticHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.TimeUnit;

/** The HTTP/JSON API. It validates and maps; every decision is made below it. */
public final class HttpVerticle extends VerticleBase {

  private static final int DEFAULT_PAGE = 50;
  private static final int MAX_PAGE = 1000;
  private static final long READY_TIMEOUT_MS = 2_000;

  private final TasklineConfig config;
  private final Admission admission;
  private final Control control;
  private final Journal journal;
  private final QueueRegistry queues;
  private final TasklineMetrics metrics;
  private final EventHub hub;
  private HttpServer server;
  private WorkerExecutor scrapes;

  public HttpVerticle(TasklineConfig config, Admission admission, Control control, Journal journal,
      QueueRegistry queues, TasklineMetrics metrics, EventHub hub) {
    this.hub = hub;
    this.config = config;
    this.admission = admission;
    this.control = control;
    this.journal = journal;
    this.queues = queues;
    this.metrics = metrics;
  }

  @Override
  public Future<?> start() {
    // A thread of its own: blocking task handlers share the default worker pool and must not make
    // a scrape wait, nor scrapes them.
    scrapes = vertx.createSharedWorkerExecutor("taskline-metrics", 1);
    Router router = Router.router(vertx);
    BodyHandler body = BodyHandler.create(false).setBodyLimit(config.http().bodyLimitBytes());

    router.post("/api/tasks").handler(body).handler(this::submitTask);
    router.post("/api/batches").handler(body).handler(this::submitBatch);
    router.post("/api/tasks/retry").handler(body).handler(this::retryFailed);
    router.post("/api/tasks/:id/cancel").handler(this::cancelTask);
    router.post("/api/tasks/:id/retry").handler(this::retryTask);
    router.post("/api/batches/:id/cancel").handler(this::cancelBatch);
    router.get("/api/tasks").handler(this::listTasks);
    router.get("/api/tasks/:id").handler(this::getTask);
    router.get("/api/batches/:id").handler(this::getBatch);
    router.get("/api/tasks/:id/events").handler(this::taskEvents);
    router.get("/api/batches/:id/events").handler(this::batchEvents);
    router.get("/api/queues").handler(this::getQueues);
    router.get("/api/stats").handler(this::getStats);
    router.get("/health/live").handler(ctx -> json(ctx, 200, new JsonObject().put("status", "UP")));
    router.get("/health/ready").handler(this::ready);
    router.get("/metrics").handler(this::scrape);
    // The dashboard: static files packaged in the jar, nothing fetched from elsewhere.
    router.get("/*").handler(StaticHandler.create("webroot").setCachingEnabled(false).setIndexPage("index.html"));

    router.route().failureHandler(Problems::handle);
    for (int status : new int[] {400, 404, 405, 413}) {
      router.errorHandler(status, ctx -> Problems.byStatus(ctx, status));
    }

    HttpServerOptions options = new HttpServerOptions()
        .setHost(config.http().host())
        .setPort(config.http().port())
        .setCompressionSupported(false)
        .setIdleTimeout(120)
        .setIdleTimeoutUnit(TimeUnit.SECONDS);
    return vertx.createHttpServer(options).requestHandler(router).listen()
        .onSuccess(s -> server = s);
  }

  @Override
  public Future<?> stop() {
    return scrapes == null ? Future.succeededFuture() : scrapes.close();
  }

  /** The port actually bound (differs from the configured one when that is 0). */
  public int port() {
    return server == null ? -1 : server.actualPort();
  }

  private void submitTask(RoutingContext ctx) {
    long arrived = System.nanoTime();
    JsonObject body = jsonBody(ctx);
    admission.submit(SubmissionJson.task(body), idempotencyKey(ctx), tenant(ctx))
        .onSuccess(admitted -> {
          metrics.accepted(System.nanoTime() - arrived);
          NewTask task = admitted.tasks().get(0);
          ctx.response().putHeader("Location", "/api/tasks/" + task.id());
          replayed(ctx, admitted);
          json(ctx, 202, accepted(task));
        })
        .onFailure(e -> failed(ctx, arrived, e));
  }

  private void submitBatch(RoutingContext ctx) {
    long arrived = System.nanoTime();
    JsonObject body = jsonBody(ctx);
    admission.submitBatch(SubmissionJson.batch(body), idempotencyKey(ctx), tenant(ctx))
        .onSuccess(admitted -> {
          metrics.accepted(System.nanoTime() - arrived);
          JsonArray list = new JsonArray();
          for (NewTask task : admitted.tasks()) {
            list.add(accepted(task));
          }
          ctx.response().putHeader("Location", "/api/batches/" + admitted.batchId());
          replayed(ctx, admitted);
          json(ctx, 202, new JsonObject().put("batchId", admitted.batchId().toString()).put("tasks", list));
        })
        .onFailure(e -> failed(ctx, arrived, e));
  }

  private void failed(RoutingContext ctx, long arrived, Throwable failure) {
    if (Problems.isRefusal(failure)) {
      metrics.refused(System.nanoTime() - arrived);
    }
    ctx.fail(failure);
  }

  private static void replayed(RoutingContext ctx, Admitted admitted) {
    if (admitted.replayed()) {
      // The same answer as the first time; the header only tells a curious client it is a replay.
      ctx.response().putHeader("Idempotent-Replayed", "true");
    }
  }

  private static String idempotencyKey(RoutingContext ctx) {
    return once(ctx, "Idempotency-Key");
  }

  /** Whose tasks these are, for the queues' tenant limits; null when the caller names none. */
  private static String tenant(RoutingContext ctx) {
    return once(ctx, "Taskline-Tenant");
  }

  private static String once(RoutingContext ctx, String header) {
    List<String> values = ctx.request().headers().getAll(header);
    if (values.size() > 1) {
      throw ApiException.badRequest(header + " may be given once");
    }
    return values.isEmpty() ? null : values.get(0);
  }

  private void cancelTask(RoutingContext ctx) {
    UUID id = idParam(ctx);
    control.cancel(id)
        .onSuccess(found -> {
          if (found == null) {
            ctx.fail(ApiException.notFound("no task " + id));
          } else if (found.before().terminal()) {
            ctx.fail(ApiException.conflict("already-finished", "Already finished",
                "task " + id + " already ended " + found.before().sql()));
          } else {
            json(ctx, 202, new JsonObject().put("id", id.toString())
                .put("state", found.after() == TaskState.RUNNING ? "cancelling" : found.after().sql()));
          }
        })
        .onFailure(ctx::fail);
  }

  private void cancelBatch(RoutingContext ctx) {
    UUID id = idParam(ctx);
    control.cancelBatch(id)
        .onSuccess(found -> {
          if (found.isEmpty()) {
            ctx.fail(ApiException.notFound("no batch " + id));
            return;
          }
          int cancelled = 0;
          int cancelling = 0;
          int finished = 0;
          for (var task : found) {
            if (task.before().terminal()) {
              finished++;
            } else if (task.after() == TaskState.RUNNING) {
              cancelling++;
            } else {
              cancelled++;
            }
          }
          json(ctx, 202, new JsonObject().put("batchId", id.toString()).put("cancelled", cancelled)
              .put("cancelling", cancelling).put("alreadyFinished", finished));
        })
        .onFailure(ctx::fail);
  }

  private void retryTask(RoutingContext ctx) {
    UUID id = idParam(ctx);
    control.retry(List.of(id))
        .compose(moved -> moved.isEmpty() ? journal.task(id).map(task -> {
          if (task == null) {
            throw ApiException.notFound("no task " + id);
          }
          throw ApiException.conflict("not-retryable", "Not retryable",
              "only failed or cancelled tasks can be retried; task " + id + " is " + task.getString("state"));
        }) : Future.succeededFuture(moved))
        .onSuccess(moved -> json(ctx, 202, new JsonObject().put("id", id.toString()).put("state", "pending")))
        .onFailure(ctx::fail);
  }

  private void retryFailed(RoutingContext ctx) {
    JsonObject body = jsonBody(ctx);
    for (String field : body.fieldNames()) {
      if (!List.of("queue", "type", "limit").contains(field)) {
        throw ApiException.unprocessable(field + " is not a known field (known: limit, queue, type)");
      }
    }
    Object queue = body.getValue("queue", TasklineConfig.DEFAULT_QUEUE);
    Object type = body.getValue("type");
    Object limit = body.getValue("limit", 100);
    if (!(queue instanceof String) || (type != null && !(type instanceof String)) || !(limit instanceof Integer)) {
      throw ApiException.unprocessable("queue and type must be strings, limit an integer");
    }
    control.retryFailed((String) queue, (String) type, (Integer) limit)
        .onSuccess(moved -> {
          JsonArray ids = new JsonArray();
          moved.forEach(id -> ids.add(id.toString()));
          json(ctx, 202, new JsonObject().put("retried", moved.size()).put("ids", ids));
        })
        .onFailure(ctx::fail);
  }

  private void getTask(RoutingContext ctx) {
    UUID id = idParam(ctx);
    journal.task(id)
        .onSuccess(task -> {
          if (task == null) {
            ctx.fail(ApiException.notFound("no task " + id));
          } else {
            json(ctx, 200, task);
          }
        })
        .onFailure(ctx::fail);
  }

  private void taskEvents(RoutingContext ctx) {
    UUID id = idParam(ctx);
    long after = lastEventId(ctx);
    journal.streamSnapshot(List.of(id))
        .onSuccess(found -> {
          if (found.isEmpty()) {
            ctx.fail(ApiException.notFound("no task " + id));
          } else {
            stream(ctx, List.of(id), after);
          }
        })
        .onFailure(ctx::fail);
  }

  private void batchEvents(RoutingContext ctx) {
    UUID id = idParam(ctx);
    long after = lastEventId(ctx);
    journal.batchTaskIds(id)
        .onSuccess(tasks -> {
          if (tasks.isEmpty()) {
            ctx.fail(ApiException.notFound("no batch " + id));
          } else {
            stream(ctx, tasks, after);
          }
        })
        .onFailure(ctx::fail);
  }

  private void stream(RoutingContext ctx, List<UUID> tasks, long afterEventId) {
    HttpServerResponse response = ctx.response();
    if (response.closed()) {
      return;
    }
    if (hub.openStreams() >= config.http().maxStreams()) {
      ctx.fail(ApiException.unavailable("this node serves its most open streams (" + config.http().maxStreams()
          + "); try again or another node", 5));
      return;
    }
    SseSink sink = new SseSink(vertx, response.setStatusCode(200));
    TaskStream stream = hub.open(tasks, afterEventId, sink);
    if (stream == null) {
      sink.close();
      return;
    }
    response.closeHandler(v -> {
      sink.clientGone();
      stream.close();
    });
  }

  private static long lastEventId(RoutingContext ctx) {
    String header = ctx.request().getHeader("Last-Event-ID");
    if (header == null || header.isBlank()) {
      return 0;
    }
    try {
      long id = Long.parseLong(header.trim());
      if (id >= 0) {
        return id;
      }
    } catch (NumberFormatException e) {
      // fall through
    }
    throw ApiException.badRequest("Last-Event-ID must be an event id from this stream");
  }

  private void getBatch(RoutingContext ctx) {
    UUID id = idParam(ctx);
    journal.batch(id)
        .onSuccess(batch -> {
          if (batch == null) {
            ctx.fail(ApiException.notFound("no batch " + id));
          } else {
            json(ctx, 200, batch);
          }
        })
        .onFailure(ctx::fail);
  }

  private void listTasks(RoutingContext ctx) {
    String state = single(ctx, "state");
    if (state != null && TaskState.parse(state) == null) {
      throw ApiException.badRequest("state must be one of pending, running, succeeded, failed, cancelled");
    }
    String after = single(ctx, "after");
    UUID afterId = null;
    if (after != null) {
      afterId = uuid(after);
      if (afterId == null) {
        throw ApiException.badRequest("after must be a task id");
      }
    }
    String limitText = single(ctx, "limit");
    int limit = DEFAULT_PAGE;
    if (limitText != null) {
      try {
        limit = Integer.parseInt(limitText);
      } catch (NumberFormatException e) {
        limit = -1;
      }
      if (limit < 1 || limit > MAX_PAGE) {
        throw ApiException.badRequest("limit must be an integer from 1 to " + MAX_PAGE);
      }
    }
    int pageSize = limit;
    journal.list(state, single(ctx, "queue"), single(ctx, "type"), afterId, pageSize)
        .onSuccess(tasks -> {
          JsonObject page = new JsonObject().put("tasks", new JsonArray(new ArrayList<>(tasks)));
          page.put("next", tasks.size() == pageSize ? tasks.get(tasks.size() - 1).getString("id") : null);
          json(ctx, 200, page);
        })
        .onFailure(ctx::fail);
  }

  private void getQueues(RoutingContext ctx) {
    JsonArray list = new JsonArray();
    for (TaskQueue queue : queues.all()) {
      list.add(queueJson(queue));
    }
    json(ctx, 200, new JsonObject().put("queues", list));
  }

  private void getStats(RoutingContext ctx) {
    long accepted = 0;
    long finished = 0;
    long rejected = 0;
    long waiting = 0;
    long scheduled = 0;
    long running = 0;
    double[] rates = new double[4];
    for (TaskQueue queue : queues.all()) {
      // Each queue's counts are one consistent reading; sums of consistent readings balance too.
      TaskQueue.Counts counts = queue.counts();
      QueueMeters meters = metrics.queue(queue.name());
      accepted += counts.accepted();
      finished += counts.finished();
      waiting += counts.waiting();
      scheduled += counts.scheduled();
      running += counts.running();
      rejected += meters.rejectedCount();
      QueueMeters.Rates r = meters.rates();
      rates[0] += r.arrivals10s();
      rates[1] += r.arrivals60s();
      rates[2] += r.completions10s();
      rates[3] += r.completions60s();
    }
    json(ctx, 200, new JsonObject().put("accepted", accepted).put("finished", finished).put("rejected", rejected)
        .put("waiting", waiting).put("scheduled", scheduled).put("running", running)
        .put("unfinished", waiting + scheduled + running)
        .put("rates", ratesJson(new QueueMeters.Rates(rates[0], rates[1], rates[2], rates[3]))));
  }

  private JsonObject queueJson(TaskQueue queue) {
    TaskQueue.Counts counts = queue.counts();
    QueueMeters meters = metrics.queue(queue.name());
    return new JsonObject()
        .put("name", queue.name())
        .put("waiting", counts.waiting())
        .put("running", counts.running())
        .put("scheduled", counts.scheduled())
        .put("slots", queue.config().slots())
        .put("capacity", queue.config().capacity())
        .put("scheduledCapacity", queue.config().scheduledCapacity())
        .put("tenantLimit", queue.config().tenantLimit())
        .put("accepted", counts.accepted())
        .put("finished", counts.finished())
        .put("unfinished", counts.unfinished())
        .put("rejected", meters.rejectedCount())
        .put("fencedWrites", meters.fencedCount())
        .put("leaseTakeovers", meters.takeoverCount())
        .put("lagSeconds", queue.oldestWaitingAgeMs(journal.clock().millis()) / 1000.0)
        .put("rates", ratesJson(meters.rates()));
  }

  /** Rates per second; the trend is how fast the backlog grows (negative: drains). */
  private static JsonObject ratesJson(QueueMeters.Rates rates) {
    return new JsonObject()
        .put("arrival10s", round(rates.arrivals10s())).put("arrival60s", round(rates.arrivals60s()))
        .put("completion10s", round(rates.completions10s())).put("completion60s", round(rates.completions60s()))
        .put("backlogTrend10s", round(rates.arrivals10s() - rates.completions10s()))
        .put("backlogTrend60s", round(rates.arrivals60s() - rates.completions60s()));
  }

  private static double round(double value) {
    return Math.round(value * 100) / 100.0;
  }

  private void ready(RoutingContext ctx) {
    if (admission.draining()) {
      json(ctx, 503, new JsonObject().put("status", "DOWN").put("reason", "shutting down"));
      return;
    }
    journal.ping().timeout(READY_TIMEOUT_MS, TimeUnit.MILLISECONDS)
        .onSuccess(v -> json(ctx, 200, new JsonObject().put("status", "UP").put("journal", "UP")))
        .onFailure(e -> json(ctx, 503, new JsonObject().put("status", "DOWN").put("journal", "DOWN")));
  }

  private void scrape(RoutingContext ctx) {
    // Writing every series and histogram bucket takes 10 to 25 ms of CPU: on the event loop that
    // would hold up each submission behind it, once per scrape.
    scrapes.executeBlocking(metrics::scrape, false)
        .onSuccess(text -> ctx.response().putHeader("Content-Type", "text/plain; version=0.0.4; charset=utf-8")
            .end(text))
        .onFailure(ctx::fail);
  }

  private static JsonObject accepted(NewTask task) {
    return new JsonObject()
        .put("id", task.id().toString())
        .put("state", (task.dispatchTo() == null ? TaskState.PENDING : TaskState.RUNNING).sql())
        .put("queue", task.queue())
        .put("type", task.type())
        .put("priority", task.priority())
        .put("runAt", task.runAt().toString());
  }

  private static JsonObject jsonBody(RoutingContext ctx) {
    String contentType = ctx.request().getHeader("Content-Type");
    if (contentType == null || !isJson(contentType)) {
      throw ApiException.unsupportedMediaType("send the body as application/json");
    }
    if (ctx.body().isEmpty()) {
      throw ApiException.badRequest("the body is empty; send a JSON object");
    }
    Object parsed;
    try {
      parsed = io.vertx.core.json.Json.decodeValue(ctx.body().buffer());
    } catch (DecodeException e) {
      throw ApiException.badRequest("the body is not valid JSON");
    }
    if (!(parsed instanceof JsonObject object)) {
      throw ApiException.badRequest("the body must be a JSON object");
    }
    return object;
  }

  private static boolean isJson(String contentType) {
    String mediaType = contentType.split(";", 2)[0].trim().toLowerCase(java.util.Locale.ROOT);
    return mediaType.equals("application/json") || (mediaType.startsWith("application/") && mediaType.endsWith("+json"));
  }

  private static UUID idParam(RoutingContext ctx) {
    UUID id = uuid(ctx.pathParam("id"));
    if (id == null) {
      throw ApiException.notFound("no such id: " + ctx.pathParam("id"));
    }
    return id;
  }

  private static UUID uuid(String text) {
    if (text == null || text.length() != 36) {
      return null;
    }
    try {
      return UUID.fromString(text);
    } catch (IllegalArgumentException e) {
      return null;
    }
  }

  private static String single(RoutingContext ctx, String name) {
    List<String> values = ctx.queryParam(name);
    if (values.isEmpty()) {
      return null;
    }
    if (values.size() > 1) {
      throw ApiException.badRequest(name + " may be given once");
    }
    String value = values.get(0);
    if (value.indexOf('\0') >= 0) {
      throw ApiException.badRequest(name + " must not contain the NUL character");
    }
    return value.isEmpty() ? null : value;
  }

  private static void json(RoutingContext ctx, int status, JsonObject body) {
    ctx.response().setStatusCode(status).putHeader("Content-Type", "application/json").end(body.encode());
  }
}
