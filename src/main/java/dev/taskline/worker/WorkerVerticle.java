package dev.taskline.worker;

import dev.taskline.handler.HandlerRegistry;
import dev.taskline.handler.TaskHandler;
import dev.taskline.journal.Journal;
import dev.taskline.journal.Lease;
import dev.taskline.journal.TaskState;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.queue.QueuedTask;
import dev.taskline.queue.TaskQueue;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs one queue's tasks on this node, never more than the queue's slots at once. It owns its
 * running count on its own event loop; the queue wakes it when work arrives, so nothing polls.
 */
public final class WorkerVerticle extends VerticleBase {

  private static final Logger LOG = Logger.getLogger(WorkerVerticle.class.getName());

  private final TaskQueue queue;
  private final Journal journal;
  private final HandlerRegistry handlers;
  private final QueueMeters meters;
  private final String workerId;
  private final long progressIntervalMs;
  private final Duration leaseFor;
  private final AtomicBoolean wakeScheduled = new AtomicBoolean();
  private int running;
  private boolean stopping;

  public WorkerVerticle(TaskQueue queue, Journal journal, HandlerRegistry handlers, QueueMeters meters,
      String nodeId, long progressIntervalMs) {
    this.queue = queue;
    this.journal = journal;
    this.handlers = handlers;
    this.meters = meters;
    this.workerId = nodeId + "/" + queue.name();
    this.progressIntervalMs = progressIntervalMs;
    this.leaseFor = Duration.ofMillis(queue.config().leaseMs());
  }

  @Override
  public Future<?> start() {
    queue.onAvailable(this::wake);
    wake();
    return Future.succeededFuture();
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    queue.onAvailable(() -> { });
    return Future.succeededFuture();
  }

  /** Safe from any thread; many wake-ups before the drain runs cost one hop. */
  private void wake() {
    if (wakeScheduled.compareAndSet(false, true)) {
      context.runOnContext(v -> {
        wakeScheduled.set(false);
        drain();
      });
    }
  }

  private void drain() {
    while (!stopping && running < queue.config().slots()) {
      QueuedTask task = queue.poll();
      if (task == null) {
        return;
      }
      running++;
      claimAndRun(task).onComplete(done -> {
        if (done.failed()) {
          LOG.log(Level.WARNING, "task " + task.id() + " could not be run or recorded", done.cause());
        }
        running--;
        queue.release(task.id());
        drain();
      });
    }
  }

  private Future<Void> claimAndRun(QueuedTask task) {
    return journal.claim(task.id(), task.leaseVersion(), workerId, leaseFor).compose(lease -> {
      if (lease == null) {
        // Cancelled, finished or claimed by another node since it was queued: nothing to do.
        meters.claimLost();
        return Future.succeededFuture();
      }
      meters.started();
      return run(task, lease).eventually(() -> {
        meters.stopped();
        return Future.succeededFuture();
      });
    });
  }

  private Future<Void> run(QueuedTask task, Lease lease) {
    Attempt attempt = new Attempt(vertx, context, journal, task, lease, leaseFor,
        queue.config().heartbeatMs(), progressIntervalMs);
    TaskHandler handler = handlers.get(task.type());
    Future<JsonObject> outcome = handler == null
        ? Future.failedFuture(new IllegalStateException("no handler for task type '" + task.type() + "' on this node"))
        : invoke(handler, attempt);
    return outcome.transform(done -> {
      attempt.end();
      Future<Boolean> write = done.succeeded()
          ? journal.finish(lease, TaskState.SUCCEEDED, done.result() == null ? new JsonObject() : done.result(), null, "succeeded")
          : journal.finish(lease, TaskState.FAILED, null, Errors.describe(done.cause()), "failed");
      return write.map(landed -> {
        if (!landed) {
          // Our lease lapsed and someone else owns the task now; their result is the one that counts.
          meters.fenced();
        } else if (done.succeeded()) {
          meters.succeeded();
        } else {
          meters.failed();
        }
        return null;
      });
    });
  }

  private Future<JsonObject> invoke(TaskHandler handler, Attempt attempt) {
    try {
      if (handler.blocking()) {
        return vertx.executeBlocking(() -> handler.run(attempt), false).compose(inner -> inner);
      }
      Future<JsonObject> result = handler.run(attempt);
      return result == null ? Future.failedFuture(new IllegalStateException("handler returned no future")) : result;
    } catch (Throwable e) {
      return Future.failedFuture(e);
    }
  }
}
