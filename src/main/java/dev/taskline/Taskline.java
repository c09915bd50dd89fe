package dev.taskline;

import dev.taskline.admission.Admission;
import dev.taskline.config.TasklineConfig;
import dev.taskline.handler.HandlerRegistry;
import dev.taskline.http.HttpVerticle;
import dev.taskline.journal.EmbeddedPostgresServer;
import dev.taskline.journal.Journal;
import dev.taskline.journal.Migrator;
import dev.taskline.journal.PgUrl;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.queue.QueueRegistry;
import dev.taskline.queue.TaskQueue;
import dev.taskline.recovery.Recovery;
import dev.taskline.recovery.RecoveryVerticle;
import dev.taskline.worker.WorkerVerticle;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HexFormat;
import java.util.List;
import java.util.concurrent.ThreadLocalRandom;
import java.util.logging.Logger;

/**
 * One Taskline node: it wires the parts together and deploys them in order, as one chain. Tests
 * start nodes through here with their own clock and configuration.
 */
public final class Taskline {

  private static final Logger LOG = Logger.getLogger(Taskline.class.getName());

  private final Vertx vertx;
  private final String nodeId;
  private final EmbeddedPostgresServer embedded;
  private final Pool pool;
  private final Journal journal;
  private final QueueRegistry queues;
  private final TasklineMetrics metrics;
  private final Recovery recovery;
  private final List<String> deployments = new ArrayList<>();
  private HttpVerticle http;

  private Taskline(Vertx vertx, TasklineConfig config, Clock clock, EmbeddedPostgresServer embedded, String pgUrl) {
    this.vertx = vertx;
    this.nodeId = "node-" + HexFormat.of().toHexDigits(ThreadLocalRandom.current().nextInt());
    this.embedded = embedded;
    this.pool = PgBuilder.pool()
        .with(new PoolOptions().setMaxSize(config.journal().poolSize()))
        .connectingTo(PgUrl.parse(pgUrl).setPipeliningLimit(256))
        .using(vertx)
        .build();
    this.journal = new Journal(pool, clock);
    this.queues = new QueueRegistry(config.queues().values());
    this.metrics = new TasklineMetrics(clock);
    for (TaskQueue queue : queues.all()) {
      metrics.register(queue);
    }
    this.recovery = new Recovery(journal, queues, metrics, config.recovery().batchSize());
  }

  /** Starts a node: journal (embedded unless a URL is configured), migrations, workers, recovery, API. */
  public static Future<Taskline> start(Vertx vertx, TasklineConfig config, Clock clock) {
    Future<EmbeddedPostgresServer> embedded = config.journal().pgUrl() != null
        ? Future.succeededFuture(null)
        // Starting PostgreSQL takes seconds and blocks; it runs on a worker thread.
        : vertx.executeBlocking(() -> EmbeddedPostgresServer.start(config.journal().dataDir()), false);
    return embedded.compose(server -> {
      String url = server == null ? config.journal().pgUrl() : server.url();
      Taskline node = new Taskline(vertx, config, clock, server, url);
      return node.deploy(config).recover(e -> node.close().transform(ignored -> Future.failedFuture(e)));
    });
  }

  private Future<Taskline> deploy(TasklineConfig config) {
    HandlerRegistry handlers = HandlerRegistry.fromClasspath();
    Admission admission = new Admission(config, queues, handlers, journal, metrics, journal.clock());
    return Migrator.migrate(vertx, pool)
        .compose(applied -> deployWorkers(handlers, config))
        .compose(v -> track(vertx.deployVerticle(new RecoveryVerticle(recovery, queues, config.recovery().intervalMs()))))
        .compose(v -> {
          http = new HttpVerticle(config, admission, journal, queues, metrics);
          return track(vertx.deployVerticle(http));
        })
        .map(v -> {
          LOG.info(nodeId + " listening on http://" + config.http().host() + ":" + http.port());
          return this;
        });
  }

  private Future<Void> deployWorkers(HandlerRegistry handlers, TasklineConfig config) {
    Future<Void> chain = Future.succeededFuture();
    for (TaskQueue queue : queues.all()) {
      chain = chain.compose(v -> track(vertx.deployVerticle(new WorkerVerticle(queue, journal, handlers,
          metrics.queue(queue.name()), nodeId, config.worker().progressIntervalMs()))));
    }
    return chain;
  }

  private Future<Void> track(Future<String> deployment) {
    return deployment.map(id -> {
      deployments.add(id);
      return null;
    });
  }

  public int httpPort() {
    return http.port();
  }

  public String nodeId() {
    return nodeId;
  }

  public Recovery recovery() {
    return recovery;
  }

  public Journal journal() {
    return journal;
  }

  public QueueRegistry queues() {
    return queues;
  }

  public TasklineMetrics metrics() {
    return metrics;
  }

  /** Undeploys in reverse order, then closes the pool and the embedded PostgreSQL. */
  public Future<Void> close() {
    Future<Void> chain = Future.succeededFuture();
    for (int i = deployments.size() - 1; i >= 0; i--) {
      String id = deployments.get(i);
      chain = chain.compose(v -> vertx.undeploy(id)).recover(e -> Future.succeededFuture());
    }
    return chain
        .compose(v -> pool.close())
        .compose(v -> embedded == null ? Future.<Void>succeededFuture()
            : vertx.executeBlocking(() -> {
              embedded.close();
              return null;
            }, false));
  }
}
