package dev.taskline.admission;

import dev.taskline.config.QueueConfig;
import dev.taskline.config.TasklineConfig;
import dev.taskline.handler.HandlerRegistry;
import dev.taskline.handler.InvalidPayloadException;
import dev.taskline.handler.TaskHandler;
import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalBusyException;
import dev.taskline.journal.NewTask;
import dev.taskline.journal.TaskIds;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.queue.QueueRegistry;
import dev.taskline.queue.QueuedTask;
import dev.taskline.queue.TaskQueue;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.regex.Pattern;

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
  public static final long MAX_DELAY_MS = 365L * 24 * 3600 * 1000;
  public static final int MAX_KEY_LENGTH = 255;
  /** A tenant name: what a caller's own account or customer ids look like, nothing that needs escaping. */
  static final Pattern TENANT = Pattern.compile("[A-Za-z0-9._:@-]{1,128}");

  private final TasklineConfig config;
  private final QueueRegistry queues;
  private final HandlerRegistry handlers;
  private final Journal journal;
  private final TasklineMetrics metrics;
  private final Clock clock;
  private final String nodeId;
  private volatile boolean draining;

  public Admission(TasklineConfig config, QueueRegistry queues, HandlerRegistry handlers, Journal journal,
      TasklineMetrics metrics, Clock clock, String nodeId) {
    this.nodeId = nodeId;
    this.config = config;
    this.queues = queues;
    this.handlers = handlers;
    this.journal = journal;
    this.metrics = metrics;
    this.clock = clock;
  }

  /** From now on every submission is refused with {@link ShuttingDownException}. */
  public void drain() {
    draining = true;
  }

  public boolean draining() {
    return draining;
  }

  /** Admits one task; {@code idempotencyKey} and {@code tenant} may be null. */
  public Future<Admitted> submit(Submission submission, String idempotencyKey, String tenant) {
    return admit(List.of(submission), false, idempotencyKey, tenant);
  }

  /** Admits a batch, all or nothing; {@code idempotencyKey} and {@code tenant} may be null. */
  public Future<Admitted> submitBatch(List<Submission> submissions, String idempotencyKey, String tenant) {
    int max = config.http().maxBatchSize();
    if (submissions.isEmpty()) {
      return Future.failedFuture(new InvalidTaskException("a batch needs at least one task"));
    }
    if (submissions.size() > max) {
      return Future.failedFuture(new InvalidTaskException(
          "a batch may hold at most " + max + " tasks, got " + submissions.size()));
    }
    return admit(submissions, true, idempotencyKey, tenant);
  }

  private Future<Admitted> admit(List<Submission> submissions, boolean batch, String key, String tenant) {
    if (draining) {
      TaskQueue queue = queues.get(submissions.get(0).queue() == null ? TasklineConfig.DEFAULT_QUEUE
          : submissions.get(0).queue());
      if (queue != null) {
        metrics.queue(queue.name()).rejectedShuttingDown(submissions.size());
      }
      return Future.failedFuture(new ShuttingDownException());
    }
    List<NewTask> tasks;
    try {
      if (key != null && (key.isBlank() || key.length() > MAX_KEY_LENGTH)) {
        throw new InvalidTaskException("Idempotency-Key must be 1 to " + MAX_KEY_LENGTH + " characters");
      }
      if (tenant != null && !TENANT.matcher(tenant).matches()) {
        throw new InvalidTaskException("Taskline-Tenant must be 1 to 128 letters, digits, '.', '_', ':', '@' or '-'");
      }
      tasks = validate(submissions, batch ? TaskIds.next(clock) : null, tenant);
      if (tenant != null) {
        withinTenantLimits(tasks);
      }
    } catch (InvalidTaskException e) {
      return Future.failedFuture(e);
    }
    if (key == null) {
      return reserveAndInsert(tasks, tenant, finalTasks -> journal.insert(finalTasks).map(v -> true))
          .map(finalTasks -> new Admitted(finalTasks.get(0).batchId(), finalTasks, false));
    }
    String hash = requestHash(submissions, batch, tenant);
    // Keys are the caller's own names (an order number, say), and two tenants may well pick the
    // same one: each tenant's keys live apart. HTTP allows no control character in a header value;
    // and as the tenant is part of the request's hash, a key made to look like another tenant's
    // would only get 409, never that tenant's answer.
    String journalKey = tenant == null ? key : tenant + '\u0001' + key;
    // A replay answers even when the queue is full now: the work it names was accepted long ago.
    return journal.idempotentAnswer(journalKey).compose(earlier -> {
      if (earlier != null) {
        return Future.succeededFuture(replay(key, hash, earlier));
      }
      Journal.IdempotentAnswer[] lost = new Journal.IdempotentAnswer[1];
      JsonObject response = answerJson(tasks);
      Duration keepFor = Duration.ofMillis(config.retention().idempotencyKeyTtlMs());
      return reserveAndInsert(tasks, tenant,
              finalTasks -> journal.insertIdempotent(journalKey, hash, response, finalTasks, keepFor)
              .map(answer -> {
                lost[0] = answer;
                return answer == null;
              }))
          .map(finalTasks -> lost[0] == null
              ? new Admitted(finalTasks.get(0).batchId(), finalTasks, false)
              : replay(key, hash, lost[0]))
          // No room: but a racing twin may have taken the key meanwhile, and its answer is ours.
          .recover(e -> e instanceof QueueFullException || e instanceof TenantLimitException
              ? journal.idempotentAnswer(journalKey).compose(twin -> twin == null ? Future.failedFuture(e)
                  : Future.succeededFuture(replay(key, hash, twin)))
              : Future.failedFuture(e));
    });
  }

  /**
   * Reserves room for the tasks (or, when their queue is idle, free slots: they are then journaled
   * claimed and start without a claim of their own), runs {@code insert} with the tasks as they
   * will be journaled, then fills the reservations (when the insert says it journaled them) or
   * gives them back (when it failed or inserted nothing). The future holds the journaled tasks.
   */
  private Future<List<NewTask>> reserveAndInsert(List<NewTask> tasks, String tenant,
      java.util.function.Function<List<NewTask>, Future<Boolean>> insert) {
    Instant now = clock.instant();
    Map<String, Reservation> byKey = new LinkedHashMap<>();
    for (NewTask task : tasks) {
      boolean later = task.runAt().isAfter(now);
      byKey.computeIfAbsent(task.queue() + (later ? "/scheduled" : ""),
          k -> new Reservation(queues.get(task.queue()), later, tenant, new ArrayList<>())).tasks.add(task);
    }
    List<Reservation> reservations = new ArrayList<>(byKey.values());
    List<Reservation> made = new ArrayList<>();
    for (Reservation reservation : reservations) {
      TaskQueue.Room room = reservation.tryReserve(nodeId, now);
      if (room != TaskQueue.Room.RESERVED) {
        made.forEach(Reservation::cancel);
        return Future.failedFuture(room == TaskQueue.Room.TENANT_LIMIT
            ? tenantLimit(reservation, tasks.size()) : full(reservation, tasks.size()));
      }
      made.add(reservation);
    }
    List<NewTask> journaled = new ArrayList<>(tasks.size());
    for (NewTask task : tasks) {
      journaled.add(byKey.get(task.queue() + (task.runAt().isAfter(now) ? "/scheduled" : "")).journaled(task));
    }
    return insert.apply(journaled)
        .onFailure(e -> {
          reservations.forEach(Reservation::cancel);
          if (e instanceof JournalBusyException) {
            reservations.forEach(r -> metrics.queue(r.queue.name()).rejectedJournalBusy(r.tasks.size()));
          }
        })
        .map(inserted -> {
          if (!inserted) {
            reservations.forEach(Reservation::cancel);
            return journaled;
          }
          for (Reservation reservation : reservations) {
            reservation.fill();
            metrics.queue(reservation.queue.name()).accepted(reservation.tasks.size());
          }
          return journaled;
        });
  }

  private Admitted replay(String key, String hash, Journal.IdempotentAnswer earlier) {
    if (earlier.requestHash() == null || !earlier.requestHash().equals(hash)) {
      throw new IdempotencyConflictException(key);
    }
    JsonObject response = earlier.response();
    String batchId = response.getString("batchId");
    List<NewTask> tasks = new ArrayList<>();
    for (Object item : response.getJsonArray("tasks")) {
      JsonObject task = (JsonObject) item;
      tasks.add(new NewTask(UUID.fromString(task.getString("id")), task.getString("queue"), task.getString("type"),
          null, task.getInteger("priority"), Instant.parse(task.getString("runAt")), 0, null,
          batchId == null ? null : UUID.fromString(batchId)));
    }
    return new Admitted(batchId == null ? null : UUID.fromString(batchId), tasks, true);
  }

  private static JsonObject answerJson(List<NewTask> tasks) {
    JsonArray list = new JsonArray();
    for (NewTask task : tasks) {
      list.add(new JsonObject().put("id", task.id().toString()).put("queue", task.queue()).put("type", task.type())
          .put("priority", task.priority()).put("runAt", task.runAt().toString()));
    }
    UUID batchId = tasks.get(0).batchId();
    return new JsonObject().put("batchId", batchId == null ? null : batchId.toString()).put("tasks", list);
  }

  private static String requestHash(List<Submission> submissions, boolean batch, String tenant) {
    JsonArray canonical = new JsonArray();
    for (Submission submission : submissions) {
      canonical.add(submission.canonical());
    }
    // The same key from another tenant is another request: it must not replay this one's answer.
    return Canonical.sha256((batch ? "batch:" : "task:") + (tenant == null ? "" : "tenant=" + tenant + ":")
        + canonical.encode());
  }

  private TenantLimitException tenantLimit(Reservation reservation, int total) {
    TaskQueue queue = reservation.queue;
    QueueMeters meters = metrics.queue(queue.name());
    meters.rejectedTenantLimit(total);
    int unfinished = queue.tenantHeld(reservation.tenant);
    // The tenant's tasks wait in line with everyone else's, so one of them may end only when the
    // work ahead of it is done: the queue's whole backlog at its completion rate, as for a full queue.
    TaskQueue.Counts counts = queue.counts();
    return new TenantLimitException(queue.name(), reservation.tenant, queue.config().tenantLimit(), unfinished,
        reservation.tasks.size(), RetryAfter.seconds(counts.waiting() + counts.running(), meters.completionRate()));
  }

  /** A request with more tasks for one queue than its tenant limit could never be admitted: 422, not 429. */
  private void withinTenantLimits(List<NewTask> tasks) {
    Map<String, Integer> perQueue = new LinkedHashMap<>();
    for (NewTask task : tasks) {
      perQueue.merge(task.queue(), 1, Integer::sum);
    }
    perQueue.forEach((name, n) -> {
      int limit = queues.get(name).config().tenantLimit();
      if (limit > 0 && n > limit) {
        throw new InvalidTaskException("queue '" + name + "' holds at most " + limit
            + " unfinished tasks of one tenant, and this request has " + n + " for it");
      }
    });
  }

  private QueueFullException full(Reservation reservation, int total) {
    TaskQueue queue = reservation.queue;
    QueueMeters meters = metrics.queue(queue.name());
    int wanted = reservation.tasks.size();
    if (reservation.scheduled) {
      meters.rejectedScheduledFull(total);
      int capacity = queue.config().scheduledCapacity();
      return new QueueFullException(queue.name(), capacity, queue.scheduled(), wanted,
          RetryAfter.seconds(queue.scheduled(), meters.completionRate()), true);
    }
    meters.rejectedFull(total);
    int capacity = queue.config().capacity();
    int backlog = capacity - queue.room();
    return new QueueFullException(queue.name(), capacity, backlog, wanted,
        RetryAfter.seconds(backlog, meters.completionRate()));
  }

  private List<NewTask> validate(List<Submission> submissions, UUID batchId, String tenant) {
    List<NewTask> tasks = new ArrayList<>(submissions.size());
    Instant now = clock.instant();
    for (int i = 0; i < submissions.size(); i++) {
      String where = batchId == null ? "" : "tasks[" + i + "].";
      Submission s = submissions.get(i);
      String queueName = s.queue() == null ? TasklineConfig.DEFAULT_QUEUE : s.queue();
      TaskQueue queue = queues.get(queueName);
      if (queue == null) {
        throw new InvalidTaskException(where + "queue: unknown queue '" + queueName + "'");
      }
      QueueConfig queueConfig = queue.config();
      TaskHandler handler = handlers.get(s.type());
      if (handler == null) {
        throw new InvalidTaskException(where + "type: unknown task type '" + s.type() + "' (known: "
            + String.join(", ", handlers.types()) + ")");
      }
      int priority = s.priority() == null ? 0 : s.priority();
      if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
        throw new InvalidTaskException(where + "priority must be from " + MIN_PRIORITY + " to " + MAX_PRIORITY);
      }
      int maxAttempts = s.maxAttempts() == null ? queueConfig.maxAttempts() : s.maxAttempts();
      if (maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS) {
        throw new InvalidTaskException(where + "maxAttempts must be from 1 to " + MAX_ATTEMPTS);
      }
      long timeoutMs = s.timeoutMs() == null ? queueConfig.timeoutMs() : s.timeoutMs();
      if (timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
        throw new InvalidTaskException(where + "timeoutMs must be from 1 to " + MAX_TIMEOUT_MS);
      }
      Instant runAt = runAt(s, now, where);
      try {
        handler.validate(s.payload());
      } catch (InvalidPayloadException e) {
        throw new InvalidTaskException(where + "payload: " + e.getMessage());
      }
      tasks.add(new NewTask(TaskIds.next(clock), queueConfig.name(), s.type(), s.payload().encode(), priority, runAt,
          maxAttempts, timeoutMs, batchId, tenant));
    }
    return tasks;
  }

  private static Instant runAt(Submission s, Instant now, String where) {
    if (s.delayMs() != null && s.runAt() != null) {
      throw new InvalidTaskException(where + "give delayMs or runAt, not both");
    }
    if (s.delayMs() != null) {
      if (s.delayMs() < 0 || s.delayMs() > MAX_DELAY_MS) {
        throw new InvalidTaskException(where + "delayMs must be from 0 to " + MAX_DELAY_MS);
      }
      return now.plusMillis(s.delayMs());
    }
    if (s.runAt() != null) {
      if (s.runAt().isAfter(now.plusMillis(MAX_DELAY_MS))) {
        throw new InvalidTaskException(where + "runAt must be at most a year ahead");
      }
      // A time in the past means "now"; the task keeps its age from then for fairness.
      return s.runAt().isBefore(now) ? now : s.runAt();
    }
    return now;
  }

  /**
   * Room taken in one queue for tasks about to be journaled: free slots (dispatched at once),
   * waiting room, or scheduled room.
   */
  private static final class Reservation {
    final TaskQueue queue;
    final boolean scheduled;
    final String tenant;
    final List<NewTask> tasks;
    private final Map<UUID, NewTask> dispatched = new java.util.HashMap<>();

    Reservation(TaskQueue queue, boolean scheduled, String tenant, List<NewTask> tasks) {
      this.queue = queue;
      this.scheduled = scheduled;
      this.tenant = tenant;
      this.tasks = tasks;
    }

    TaskQueue.Room tryReserve(String nodeId, Instant now) {
      if (scheduled) {
        return queue.tryReserveScheduled(ids(), tenant);
      }
      if (queue.tryDispatch(ids(), tenant)) {
        String worker = queue.workerId(nodeId);
        Instant leaseUntil = now.plusMillis(queue.config().leaseMs());
        for (NewTask task : tasks) {
          dispatched.put(task.id(), task.dispatched(worker, leaseUntil));
        }
        return TaskQueue.Room.RESERVED;
      }
      return queue.tryReserve(ids(), tenant);
    }

    /** The task as it goes into the journal: claimed, when it was dispatched. */
    NewTask journaled(NewTask task) {
      return dispatched.getOrDefault(task.id(), task);
    }

    void cancel() {
      if (!dispatched.isEmpty()) {
        queue.cancelDispatch(ids());
      } else {
        queue.cancelReservation(ids(), scheduled);
      }
    }

    void fill() {
      if (!dispatched.isEmpty()) {
        List<TaskQueue.Dispatched> ready = new ArrayList<>(tasks.size());
        for (NewTask task : tasks) {
          NewTask claimed = dispatched.get(task.id());
          ready.add(new TaskQueue.Dispatched(held(claimed, 1, 1), claimed.lease()));
        }
        queue.fillDispatch(ready);
        return;
      }
      List<QueuedTask> held = new ArrayList<>(tasks.size());
      for (NewTask task : tasks) {
        held.add(held(task, 0, 0));
      }
      if (scheduled) {
        queue.fillScheduledReservation(held);
      } else {
        queue.fillReservation(held);
      }
    }

    private static QueuedTask held(NewTask task, long leaseVersion, int attempt) {
      return new QueuedTask(task.id(), task.queue(), task.type(), task.payloadJson(), task.priority(), leaseVersion,
          attempt, task.maxAttempts(), task.timeoutMs(), task.runAt().toEpochMilli(), task.tenant());
    }

    private List<UUID> ids() {
      List<UUID> ids = new ArrayList<>(tasks.size());
      for (NewTask task : tasks) {
        ids.add(task.id());
      }
      return ids;
    }
  }
}
