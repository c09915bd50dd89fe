package dev.taskline.worker;

import dev.taskline.admission.Control;
import dev.taskline.handler.HandlerRegistry;
import dev.taskline.handler.PermanentTaskException;
import dev.taskline.handler.PushHandler;
import dev.taskline.handler.SnoozeException;
import dev.taskline.handler.TaskHandler;
import dev.taskline.journal.Journal;
import dev.taskline.journal.Lease;
import dev.taskline.journal.Task;
import dev.taskline.journal.TaskState;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.queue.TaskQueue;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.client.WebClient;
import io.vertx.ext.web.client.WebClientOptions;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.DoubleSupplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs one queue's tasks on this node, never more than the queue's slots at once. It owns its
 * running attempts on its own event loop; the queue wakes it when work arrives, so nothing polls.
 * When an attempt ends it decides what the journal records: success, failure, a retry after
 * backoff, a snooze, a cancellation.
 */
public final class WorkerVerticle extends VerticleBase {

  private static final Logger LOG = Logger.getLogger(WorkerVerticle.class.getName());

  private final TaskQueue queue;
  private final Journal journal;
  private final HandlerRegistry handlers;
  private final QueueMeters meters;
  private final Clock clock;
  private final DoubleSupplier jitter;
  private final ProgressListener progress;
  private final String workerId;
  private final long progressIntervalMs;
  private final Duration leaseFor;
  private final AtomicBoolean wakeScheduled = new AtomicBoolean();
  private final Map<UUID, Attempt> attempts = new HashMap<>();
  private MessageConsumer<JsonArray> cancels;
  /** The queue's push target, when it has one: it runs every task of the queue, whatever its type. */
  private PushHandler push;
  private WebClient pushClient;
  private int running;
  private boolean stopping;
  private Promise<Void> idle;

  public WorkerVerticle(TaskQueue queue, Journal journal, HandlerRegistry handlers, QueueMeters meters, Clock clock,
      DoubleSupplier jitter, ProgressListener progress, String nodeId, long progressIntervalMs) {
    this.progress = progress;
    this.queue = queue;
    this.journal = journal;
    this.handlers = handlers;
    this.meters = meters;
    this.clock = clock;
    this.jitter = jitter;
    // The name under which this node's worker of the queue holds leases.
    this.workerId = nodeId + "/" + queue.name();
    this.progressIntervalMs = progressIntervalMs;
    this.leaseFor = Duration.ofMillis(queue.config().leaseMs());
  }

  @Override
  public Future<?> start() {
    cancels = vertx.eventBus().consumer(Control.CANCEL_ADDRESS, message -> {
      for (Object id : message.body()) {
        Attempt attempt = attempts.get(UUID.fromString((String) id));
        if (attempt != null) {
          attempt.requestCancel();
        }
      }
    });
    if (queue.config().push() != null) {
      // As many connections as the queue runs calls at once.
      pushClient = WebClient.create(vertx, new WebClientOptions().setFollowRedirects(false).setUserAgent("Taskline"),
          new io.vertx.core.http.PoolOptions().setHttp1MaxSize(queue.config().slots()));
      push = new PushHandler(pushClient, queue.config().push(), clock);
    }
    queue.onAvailable(this::wake);
    queue.servedBy(workerId, leaseFor);
    wake();
    return cancels.completion();
  }

  @Override
  public Future<?> stop() {
    stopping = true;
    queue.servedBy(null, null);
    queue.onAvailable(() -> { });
    if (pushClient != null) {
      pushClient.close();
    }
    return cancels.unregister();
  }

  /**
   * Takes no new tasks, gives running ones {@code grace} to end, then hands the rest back to the
   * journal (pending, version bumped) so that any node can take them at once.
   */
  public Future<Void> drain(Duration grace) {
    Promise<Void> done = Promise.promise();
    context.runOnContext(v -> {
      stopping = true;
      queue.servedBy(null, null);
      // Still woken: an admission that took a slot before the line above may commit after it.
      releaseDispatched();
      if (running == 0) {
        done.complete();
        return;
      }
      idle = done;
      vertx.setTimer(Math.max(1, grace.toMillis()), id -> {
        for (Attempt attempt : new ArrayList<>(attempts.values())) {
          attempt.release();
        }
      });
    });
    return done.future();
  }

  /**
   * Dispatched tasks this node will not start now are journaled as running: hand them back at
   * once rather than leave them to a lapsing lease.
   */
  private void releaseDispatched() {
    TaskQueue.Dispatched left;
    while ((left = queue.pollDispatched()) != null) {
      TaskQueue.Dispatched task = left;
      running++;
      track(task.task(), journal.release(task.lease()).map(state -> (Task) null));
    }
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
    if (stopping) {
      releaseDispatched();
      return;
    }
    TaskQueue.Dispatched dispatched;
    while (!stopping && (dispatched = queue.pollDispatched()) != null) {
      running++;
      track(dispatched.task(), started(dispatched.task(), dispatched.lease()));
    }
    while (!stopping) {
      // The queue keeps the slot count: it hands out a task only while one is free.
      Task task = queue.poll();
      if (task == null) {
        return;
      }
      running++;
      track(task, claimAndRun(task));
    }
  }

  /** When an attempt is over: free its slot, or hold the task for its next try, and look for more. */
  private void track(Task task, Future<Task> attempt) {
    attempt.onComplete(done -> {
      if (done.failed()) {
        LOG.log(Level.WARNING, "task " + task.id() + " could not be run or recorded", done.cause());
      }
      running--;
      if (done.succeeded() && done.result() != null && !stopping) {
        // Back to pending with a due time: hold it here until then (or leave it to the journal).
        queue.reschedule(done.result());
      } else {
        queue.done(task.id());
      }
      if (running == 0 && idle != null) {
        idle.tryComplete();
      }
      drain();
    });
  }

  /** Claims and runs one task; the future holds the task again when it went back to pending. */
  private Future<Task> claimAndRun(Task task) {
    return journal.claim(task.id(), task.leaseVersion(), workerId, leaseFor)
        .onComplete(done -> queue.claimReturned())
        .compose(lease -> {
          if (lease == null) {
            // Cancelled, finished or claimed by another node since it was queued: nothing to do.
            meters.claimLost();
            return Future.succeededFuture();
          }
          return started(task, lease);
        });
  }

  /**
   * Runs a task whose lease this worker holds, and times it: the wait from when it was due (for a
   * task dispatched at admission, its submit-to-start time) and the attempt itself.
   */
  private Future<Task> started(Task task, Lease lease) {
    meters.started(clock.millis() - task.dueAtMillis());
    long startedAt = System.nanoTime();
    return run(task, lease).eventually(() -> {
      meters.ran(System.nanoTime() - startedAt);
      return Future.succeededFuture();
    });
  }

  private Future<Task> run(Task task, Lease lease) {
    long timeoutMs = task.timeoutMs() == null ? queue.config().timeoutMs() : task.timeoutMs();
    Attempt attempt = new Attempt(vertx, context, journal, task, lease, leaseFor, queue.config().heartbeatMs(),
        timeoutMs, progressIntervalMs, progress);
    attempts.put(task.id(), attempt);
    TaskHandler handler = push != null ? push : handlers.get(task.type());
    attempt.handlerDone(handler == null
        ? Future.failedFuture(new PermanentTaskException("no handler for task type '" + task.type() + "' on this node"))
        : !attempt.payloadReadable()
        ? Future.failedFuture(new PermanentTaskException("the payload in the journal is not a JSON object"))
        : invoke(handler, attempt));
    return attempt.outcome().compose(outcome -> {
      attempt.end();
      attempts.remove(task.id());
      return record(attempt, outcome);
    });
  }

  private Future<Task> record(Attempt attempt, Outcome outcome) {
    Lease lease = attempt.lease();
    Task task = attempt.task();
    Instant now = clock.instant();
    if (outcome instanceof Outcome.LeaseLost) {
      meters.fenced();
      return Future.succeededFuture();
    }
    if (outcome instanceof Outcome.Released) {
      return journal.release(lease)
          .onFailure(e -> LOG.log(Level.WARNING, "could not release task " + task.id()
              + "; it stays leased until " + queue.config().leaseMs() + " ms after its last heartbeat", e))
          .map(state -> {
            counted(state, false);
            return null;
          });
    }
    if (attempt.cancelRequested() && !(outcome instanceof Outcome.TimedOut)) {
      JsonObject result = outcome instanceof Outcome.Succeeded s ? s.result() : null;
      JsonObject error = outcome instanceof Outcome.Failed f ? Errors.describe(f.cause()) : null;
      return journal.cancelled(lease, result, error).map(state -> {
        counted(state, false);
        return null;
      });
    }
    if (outcome instanceof Outcome.Succeeded s) {
      return journal.succeed(lease, s.result()).map(state -> {
        counted(state, false);
        return null;
      });
    }
    Throwable cause = outcome instanceof Outcome.Failed f ? f.cause() : null;
    if (cause instanceof SnoozeException snooze) {
      Instant due = now.plus(snooze.delay());
      return journal.snoozeUntil(lease, due)
          .map(state -> requeued(state, task.pendingAgain(lease.version(), lease.attempt() - 1, due.toEpochMilli())));
    }
    JsonObject error = outcome instanceof Outcome.TimedOut t
        ? new JsonObject().put("type", "timeout").put("message", "the attempt ran longer than " + t.timeoutMs() + " ms")
        : Errors.describe(cause);
    boolean permanent = cause instanceof PermanentTaskException;
    if (!permanent && lease.attempt() < task.maxAttempts()) {
      long delay = Backoff.delayMs(lease.attempt(), queue.config().backoffBaseMs(), queue.config().backoffCapMs(),
          jitter.getAsDouble());
      Instant due = now.plusMillis(delay);
      return journal.retryAt(lease, due, error)
          .map(state -> requeued(state, task.pendingAgain(lease.version(), lease.attempt(), due.toEpochMilli())));
    }
    return journal.fail(lease, error, permanent)
        .map(state -> {
          counted(state, false);
          return null;
        });
  }

  private Task requeued(TaskState state, Task again) {
    counted(state, true);
    return state == TaskState.PENDING ? again : null;
  }

  /** Counts what the journal says became of the task; null means our write was fenced. */
  private void counted(TaskState state, boolean retry) {
    if (state == null) {
      meters.fenced();
      return;
    }
    switch (state) {
      case SUCCEEDED -> meters.succeeded();
      case FAILED -> meters.failed();
      case CANCELLED -> meters.cancelled();
      case PENDING -> {
        if (retry) {
          meters.retried();
        }
      }
      default -> { }
    }
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

  /** Running attempts, for tests and the API. */
  public int running() {
    return running;
  }
}
