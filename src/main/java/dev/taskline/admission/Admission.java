package dev.taskline.admission;

import dev.taskline.config.QueueConfig;
import dev.taskline.config.TasklineConfig;
import dev.taskline.handler.HandlerRegistry;
import dev.taskline.handler.InvalidPayloadException;
import dev.taskline.handler.TaskHandler;
import dev.taskline.journal.Journal;
import dev.taskline.journal.NewTask;
import dev.taskline.journal.TaskIds;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.queue.QueueRegistry;
import dev.taskline.queue.QueuedTask;
import dev.taskline.queue.TaskQueue;
import io.vertx.core.Future;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Says yes or no to every submission. Yes means: every rule holds, the queues had room (reserved
 * before the insert so that concurrent submissions cannot overshoot), and the insert committed.
 * Only then does the caller answer 202. No means nothing was journaled.
 */
public final class Admission {

  public static final int MIN_PRIORITY = -1000;
  public static final int MAX_PRIORITY = 1000;
  public static final int MAX_ATTEMPTS = 100;
  public static final long MAX_TIMEOUT_MS = 24L * 3600 * 1000;

  private final TasklineConfig config;
  private final QueueRegistry queues;
  private final HandlerRegistry handlers;
  private final Journal journal;
  private final TasklineMetrics metrics;
  private final Clock clock;

  public Admission(TasklineConfig config, QueueRegistry queues, HandlerRegistry handlers, Journal journal,
      TasklineMetrics metrics, Clock clock) {
    this.config = config;
    this.queues = queues;
    this.handlers = handlers;
    this.journal = journal;
    this.metrics = metrics;
    this.clock = clock;
  }

  /** Admits one task. */
  public Future<NewTask> submit(Submission submission) {
    return admit(List.of(submission), null).map(tasks -> tasks.get(0));
  }

  /** Admits a batch, all or nothing. */
  public Future<List<NewTask>> submitBatch(List<Submission> submissions) {
    int max = config.http().maxBatchSize();
    if (submissions.isEmpty()) {
      return Future.failedFuture(new InvalidTaskException("a batch needs at least one task"));
    }
    if (submissions.size() > max) {
      return Future.failedFuture(new InvalidTaskException(
          "a batch may hold at most " + max + " tasks, got " + submissions.size()));
    }
    return admit(submissions, TaskIds.next(clock));
  }

  private Future<List<NewTask>> admit(List<Submission> submissions, UUID batchId) {
    List<NewTask> tasks;
    try {
      tasks = validate(submissions, batchId);
    } catch (InvalidTaskException e) {
      return Future.failedFuture(e);
    }
    Map<TaskQueue, List<NewTask>> byQueue = new LinkedHashMap<>();
    for (NewTask task : tasks) {
      byQueue.computeIfAbsent(queues.get(task.queue()), q -> new ArrayList<>()).add(task);
    }
    List<TaskQueue> reserved = new ArrayList<>();
    for (Map.Entry<TaskQueue, List<NewTask>> entry : byQueue.entrySet()) {
      TaskQueue queue = entry.getKey();
      List<UUID> ids = ids(entry.getValue());
      if (!queue.tryReserve(ids)) {
        for (TaskQueue done : reserved) {
          done.cancelReservation(ids(byQueue.get(done)));
        }
        return Future.failedFuture(full(queue, ids.size(), tasks.size()));
      }
      reserved.add(queue);
    }
    return journal.insert(tasks)
        .onFailure(e -> byQueue.forEach((queue, queued) -> queue.cancelReservation(ids(queued))))
        .map(v -> {
          long now = clock.millis();
          byQueue.forEach((queue, queued) -> {
            List<QueuedTask> waiting = new ArrayList<>(queued.size());
            for (NewTask task : queued) {
              waiting.add(new QueuedTask(task.id(), task.queue(), task.type(), task.payload(), task.priority(), 0L,
                  0, task.maxAttempts(), task.timeoutMs(), now));
            }
            queue.fillReservation(waiting);
            metrics.queue(queue.name()).accepted(queued.size());
          });
          return tasks;
        });
  }

  private QueueFullException full(TaskQueue queue, int wanted, int total) {
    QueueMeters meters = metrics.queue(queue.name());
    meters.rejectedFull(total);
    int capacity = queue.config().capacity();
    int backlog = capacity - queue.room();
    long excess = (long) backlog + wanted - capacity;
    return new QueueFullException(queue.name(), capacity, backlog, wanted,
        RetryAfter.seconds(excess, meters.completionRate()));
  }

  private List<NewTask> validate(List<Submission> submissions, UUID batchId) {
    List<NewTask> tasks = new ArrayList<>(submissions.size());
    Instant now = clock.instant();
    for (int i = 0; i < submissions.size(); i++) {
      String where = submissions.size() == 1 && batchId == null ? "" : "tasks[" + i + "].";
      Submission s = submissions.get(i);
      String queueName = s.queue() == null ? TasklineConfig.DEFAULT_QUEUE : s.queue();
      TaskQueue queue = queues.get(queueName);
      if (queue == null) {
        throw new InvalidTaskException(where + "queue: unknown queue '" + queueName + "'");
      }
      TaskHandler handler = handlers.get(s.type());
      if (handler == null) {
        throw new InvalidTaskException(where + "type: unknown task type '" + s.type() + "' (known: "
            + String.join(", ", handlers.types()) + ")");
      }
      int priority = s.priority() == null ? 0 : s.priority();
      if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
        throw new InvalidTaskException(where + "priority must be from " + MIN_PRIORITY + " to " + MAX_PRIORITY);
      }
      int maxAttempts = s.maxAttempts() == null ? 1 : s.maxAttempts();
      if (maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS) {
        throw new InvalidTaskException(where + "maxAttempts must be from 1 to " + MAX_ATTEMPTS);
      }
      if (s.timeoutMs() != null && (s.timeoutMs() < 1 || s.timeoutMs() > MAX_TIMEOUT_MS)) {
        throw new InvalidTaskException(where + "timeoutMs must be from 1 to " + MAX_TIMEOUT_MS);
      }
      try {
        handler.validate(s.payload());
      } catch (InvalidPayloadException e) {
        throw new InvalidTaskException(where + "payload: " + e.getMessage());
      }
      QueueConfig queueConfig = queue.config();
      tasks.add(new NewTask(TaskIds.next(clock), queueConfig.name(), s.type(), s.payload(), priority, now,
          maxAttempts, s.timeoutMs(), batchId));
    }
    return tasks;
  }

  private static List<UUID> ids(List<NewTask> tasks) {
    List<UUID> ids = new ArrayList<>(tasks.size());
    for (NewTask task : tasks) {
      ids.add(task.id());
    }
    return ids;
  }
}
