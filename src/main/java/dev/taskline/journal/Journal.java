package dev.taskline.journal;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.time.Clock;
import java.time.Duration;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ObjLongConsumer;

/**
 * All reads and writes of the journal. Each transition is one statement that updates
 * {@code tasks} and appends to {@code task_events}; writes of one kind that arrive together share
 * a statement (see {@link GroupCommit}). Times come from the injected clock.
 */
public final class Journal {

  /** Most requests one grouped statement carries; bounds statement size and latency. */
  private static final int MAX_GROUP = 2_000;
  /** Submissions (of up to a batch each) that one insert statement carries at most. */
  private static final int INSERT_GROUP = 64;

  private final Pool pool;
  private final Clock clock;
  private final Sql sql;
  private final GroupCommit<List<NewTask>, Void> inserts;
  private final GroupCommit<ClaimRequest, Lease> claims;
  private final GroupCommit<FinishRequest, TaskState> finishes;
  private final GroupCommit<HeartbeatRequest, Heartbeat> heartbeats;
  private final GroupCommit<ProgressRequest, Boolean> progresses;
  private final AtomicLong fencedWrites = new AtomicLong();
  private final ObjLongConsumer<String> writeTimes;
  private volatile Consumer<Collection<UUID>> changes = ids -> { };

  public Journal(Pool pool, Clock clock) {
    this(pool, clock, (statement, nanos) -> { }, Integer.MAX_VALUE);
  }

  /**
   * @param writeTimes        told how long each grouped statement took, by statement name
   * @param maxWaitingInserts submissions that may wait for the insert in progress; beyond, {@link
   *                          #insert} fails at once with {@link JournalBusyException}
   */
  public Journal(Pool pool, Clock clock, ObjLongConsumer<String> writeTimes, int maxWaitingInserts) {
    this.pool = pool;
    this.clock = clock;
    this.writeTimes = writeTimes;
    this.sql = Sql.load("/sql/queries/tasks.sql", "/sql/queries/events.sql");
    this.inserts = new GroupCommit<>(INSERT_GROUP, maxWaitingInserts, timed("insert_tasks", this::flushInserts));
    this.claims = new GroupCommit<>(MAX_GROUP, timed("claim", this::flushClaims));
    this.finishes = new GroupCommit<>(MAX_GROUP, timed("finish", this::flushFinishes));
    this.heartbeats = new GroupCommit<>(MAX_GROUP, timed("heartbeat", this::flushHeartbeats));
    this.progresses = new GroupCommit<>(MAX_GROUP, timed("progress", this::flushProgress));
  }

  private <R, T> Function<List<R>, Future<List<T>>> timed(String statement, Function<List<R>, Future<List<T>>> flush) {
    return requests -> {
      long start = System.nanoTime();
      return flush.apply(requests).onComplete(done -> writeTimes.accept(statement, System.nanoTime() - start));
    };
  }

  public Clock clock() {
    return clock;
  }

  /**
   * Tells {@code listener} which tasks got new events, after each write has committed. It runs on
   * whatever thread completed the write and must not block.
   */
  public void onChange(Consumer<Collection<UUID>> listener) {
    this.changes = listener;
  }

  private void changed(Collection<UUID> ids) {
    if (!ids.isEmpty()) {
      changes.accept(ids);
    }
  }

  // ---- following tasks live ---------------------------------------------------------------------

  /** Current state, progress, result and newest event id of each task. */
  public Future<List<Row>> streamSnapshot(Collection<UUID> ids) {
    return pool.preparedQuery(sql.get("stream_snapshot")).execute(Tuple.of(ids.toArray(new UUID[0])))
        .map(rows -> {
          List<Row> list = new ArrayList<>(rows.size());
          rows.forEach(list::add);
          return list;
        });
  }

  /** Up to {@code limit} events of the tasks after {@code afterEventId}, and the transactions then in progress. */
  public Future<EventPage> streamEvents(Collection<UUID> ids, long afterEventId, int limit) {
    return pool.preparedQuery(sql.get("stream_events"))
        .execute(Tuple.of(ids.toArray(new UUID[0]), afterEventId, limit))
        .map(rows -> {
          Row row = rows.iterator().next();
          Object events = row.getValue("events");
          JsonArray list = events instanceof JsonArray array ? array : new JsonArray(String.valueOf(events));
          Set<String> inProgress = new HashSet<>(java.util.Arrays.asList(row.getArrayOfStrings("in_progress")));
          return new EventPage(list, inProgress);
        });
  }

  /** Which of the tasks have events after {@code afterEventId}. */
  public Future<Set<UUID>> changedSince(Collection<UUID> ids, long afterEventId) {
    return pool.preparedQuery(sql.get("changed_since")).execute(Tuple.of(ids.toArray(new UUID[0]), afterEventId))
        .map(rows -> {
          Set<UUID> changed = new HashSet<>();
          rows.forEach(row -> changed.add(row.getUUID("task_id")));
          return changed;
        });
  }

  /** The journaled progress of those of the tasks that are running. */
  public Future<List<Row>> runningProgress(Collection<UUID> ids) {
    return pool.preparedQuery(sql.get("running_progress")).execute(Tuple.of(ids.toArray(new UUID[0])))
        .map(rows -> {
          List<Row> list = new ArrayList<>(rows.size());
          rows.forEach(list::add);
          return list;
        });
  }

  public Future<Long> maxEventId() {
    return pool.query(sql.get("max_event_id")).execute().map(rows -> rows.iterator().next().getLong("max_event_id"));
  }

  public Future<List<UUID>> batchTaskIds(UUID batchId) {
    return pool.preparedQuery(sql.get("batch_task_ids")).execute(Tuple.of(batchId)).map(rows -> {
      List<UUID> ids = new ArrayList<>(rows.size());
      rows.forEach(row -> ids.add(row.getUUID("id")));
      return ids;
    });
  }

  /** Events in id order, and the ids (as text) of the transactions in progress when they were read. */
  public record EventPage(JsonArray events, Set<String> inProgress) {
  }

  /** Stale writes refused so far: finishes, heartbeats and progress of a lease that was lost. */
  public long fencedWrites() {
    return fencedWrites.get();
  }

  // ---- writes -------------------------------------------------------------------------------

  /** Submissions waiting for the insert statement in progress to return. */
  public int waitingInserts() {
    return inserts.waiting();
  }

  /**
   * Journals new tasks, all or nothing; completes after the commit, or fails at once with {@link
   * JournalBusyException} when a full insert's worth already waits.
   */
  public Future<Void> insert(List<NewTask> tasks) {
    return inserts.submit(tasks);
  }

  /** Claims a waiting task seen at {@code expectedVersion}; null when someone else got it first. */
  public Future<Lease> claim(UUID taskId, long expectedVersion, String workerId, Duration leaseFor) {
    return claims.submit(new ClaimRequest(taskId, expectedVersion, workerId, leaseFor));
  }

  /** Ends an attempt in a terminal state; null (and counted) when the lease was lost. */
  public Future<TaskState> finish(Lease lease, TaskState to, JsonObject result, JsonObject error, String reason) {
    return finishes.submit(new FinishRequest(lease, to, result, error, reason, null, 0, 0));
  }

  /**
   * Ends an attempt and puts the task back to pending, due at {@code runAt}.
   *
   * @param attemptDelta 0 when the attempt counts (a retry), -1 when it does not (a snooze, a release)
   * @param versionBump  1 to fence the attempt's holder at once (a release at shutdown)
   * @return the state the task is now in (cancelled if someone asked meanwhile), or null when the
   *     lease was lost
   */
  public Future<TaskState> requeue(Lease lease, java.time.Instant runAt, JsonObject error, String reason,
      int attemptDelta, int versionBump) {
    return finishes.submit(new FinishRequest(lease, TaskState.PENDING, null, error, reason, runAt, attemptDelta,
        versionBump));
  }

  /** Extends a lease, and tells whether the task was asked to cancel meanwhile. */
  public Future<Heartbeat> heartbeat(Lease lease, Duration leaseFor) {
    return heartbeats.submit(new HeartbeatRequest(lease, leaseFor));
  }

  /**
   * Cancels tasks by id, or every task of a batch: pending ones at once, running ones by asking
   * their worker. Answers, per task found, its state before and after.
   */
  public Future<List<Cancelled>> cancel(List<UUID> ids, UUID batchId) {
    return pool.preparedQuery(sql.get("cancel"))
        .execute(Tuple.of(ids.toArray(new UUID[0]), batchId, now()))
        .map(rows -> {
          List<Cancelled> answers = new ArrayList<>(rows.size());
          List<UUID> moved = new ArrayList<>();
          for (Row row : rows) {
            Cancelled task = new Cancelled(row.getUUID("id"), TaskState.parse(row.getString("before")),
                TaskState.parse(row.getString("after")));
            answers.add(task);
            if (!task.before().terminal()) {
              moved.add(task.id());
            }
          }
          changed(moved);
          return answers;
        });
  }

  /** Puts failed or cancelled tasks back to pending with fresh attempts; returns those it moved. */
  public Future<List<StoredTask>> retry(List<UUID> ids) {
    return pool.preparedQuery(sql.get("retry"))
        .execute(Tuple.of(ids.toArray(new UUID[0]), now()))
        .map(Journal::storedTasks)
        .onSuccess(moved -> changed(moved.stream().map(StoredTask::id).toList()));
  }

  /** Dead letters of a queue (and type), oldest first, for a bulk retry. */
  public Future<List<UUID>> failedIds(String queue, String type, int limit) {
    return pool.preparedQuery(sql.get("failed_ids"))
        .execute(Tuple.of(queue, type, limit))
        .map(rows -> {
          List<UUID> ids = new ArrayList<>(rows.size());
          for (Row row : rows) {
            ids.add(row.getUUID("id"));
          }
          return ids;
        });
  }

  /** The first answer given under an Idempotency-Key that is still live, or null. */
  public Future<IdempotentAnswer> idempotentAnswer(String key) {
    return pool.preparedQuery(sql.get("idempotency_lookup"))
        .execute(Tuple.of(key, now()))
        .map(rows -> {
          if (rows.size() == 0) {
            return null;
          }
          Row row = rows.iterator().next();
          return new IdempotentAnswer(row.getString("request_hash"), (JsonObject) row.getValue("response"));
        });
  }

  /**
   * Journals new tasks under an Idempotency-Key, in one transaction with the key. When another
   * request holds the key, inserts nothing and answers with what that request stored; the unique
   * key decides between racing requests.
   *
   * @return null when this request took the key and its tasks are journaled
   */
  public Future<IdempotentAnswer> insertIdempotent(String key, String requestHash, JsonObject response,
      List<NewTask> tasks, Duration keepFor) {
    OffsetDateTime now = now();
    return pool.withTransaction(conn -> conn.preparedQuery(sql.get("idempotency_claim"))
            .execute(Tuple.of(key, requestHash, response, now, now.plus(keepFor)))
            .compose(claimed -> {
              if (claimed.size() == 0) {
                return Future.succeededFuture(false);
              }
              return conn.preparedQuery(sql.get("insert_tasks")).execute(insertParams(List.of(tasks), now))
                  .map(true);
            }))
        .compose(inserted -> inserted
            ? Future.succeededFuture((IdempotentAnswer) null).onSuccess(v -> changed(tasks.stream().map(NewTask::id).toList()))
            // The key's owner committed before our insert gave up on it, so its row is visible now.
            : idempotentAnswer(key).map(answer -> answer != null ? answer
                : new IdempotentAnswer(null, null)));
  }

  /** Deletes finished tasks older than {@code ttl} and expired idempotency keys, a batch at a time. */
  public Future<Integer> deleteOld(Duration finishedTtl, int limit) {
    OffsetDateTime now = now();
    return pool.preparedQuery(sql.get("delete_expired_keys")).execute(Tuple.of(now, limit))
        .compose(v -> pool.preparedQuery(sql.get("delete_finished")).execute(Tuple.of(now.minus(finishedTtl), limit)))
        .map(rows -> rows.iterator().next().getLong("deleted").intValue());
  }

  public Future<Boolean> progress(Lease lease, int percent, String message) {
    return progresses.submit(new ProgressRequest(lease, percent, message));
  }

  /** Puts lapsed leases of any node back to pending with a new version; returns them. */
  public Future<List<Released>> releaseExpired(int limit) {
    return pool.preparedQuery(sql.get("release_expired"))
        .execute(Tuple.of(now(), limit))
        .map(rows -> {
          List<Released> released = new ArrayList<>(rows.size());
          List<UUID> ids = new ArrayList<>(rows.size());
          for (Row row : rows) {
            released.add(new Released(row.getUUID("id"), row.getString("queue")));
            ids.add(row.getUUID("id"));
          }
          changed(ids);
          return released;
        });
  }

  /** How many tasks of the queue wait in the journal, due now. */
  public Future<Long> pendingCount(String queue) {
    return pool.preparedQuery(sql.get("pending_count")).execute(Tuple.of(queue, now()))
        .map(rows -> rows.iterator().next().getLong("pending"));
  }

  /** Waiting tasks of a queue that are due and not in {@code exclude}, in the order they must run. */
  public Future<List<StoredTask>> pageIn(String queue, Collection<UUID> exclude, int limit, double agingPerSecond) {
    return pool.preparedQuery(sql.get("page_in"))
        .execute(Tuple.of(queue, now(), exclude.toArray(new UUID[0]), limit, agingPerSecond))
        .map(Journal::storedTasks);
  }

  private static List<StoredTask> storedTasks(RowSet<Row> rows) {
    List<StoredTask> found = new ArrayList<>(rows.size());
    for (Row row : rows) {
      found.add(new StoredTask(
          row.getUUID("id"), row.getString("queue"), row.getString("type"),
          row.getString("payload"), row.getInteger("priority"),
          row.getLong("lease_version"), row.getInteger("attempt"), row.getInteger("max_attempts"),
          row.getLong("timeout_ms"), row.getOffsetDateTime("run_at").toInstant(), row.getString("tenant")));
    }
    return found;
  }

  // ---- reads --------------------------------------------------------------------------------

  /** The task with its history, or null. */
  public Future<JsonObject> task(UUID id) {
    return pool.preparedQuery(sql.get("get_task")).execute(Tuple.of(id))
        .compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(null);
          }
          JsonObject task = TaskRows.toJson(rows.iterator().next());
          return pool.preparedQuery(sql.get("task_history")).execute(Tuple.of(id))
              .map(events -> task.put("history", TaskRows.history(events)));
        });
  }

  /** A page of tasks, newest first; {@code after} is the last id of the previous page. */
  public Future<List<JsonObject>> list(String state, String queue, String type, UUID after, int limit) {
    return pool.preparedQuery(sql.get("list_tasks"))
        .execute(Tuple.of(state, queue, type, after, limit))
        .map(Journal::tasks);
  }

  /** The batch with counts by state and its tasks, or null. */
  public Future<JsonObject> batch(UUID id) {
    return pool.preparedQuery(sql.get("get_batch")).execute(Tuple.of(id))
        .compose(rows -> {
          if (rows.size() == 0) {
            return Future.succeededFuture(null);
          }
          Row batch = rows.iterator().next();
          return pool.preparedQuery(sql.get("batch_tasks")).execute(Tuple.of(id)).map(taskRows -> {
            List<JsonObject> tasks = tasks(taskRows);
            JsonObject counts = new JsonObject();
            for (TaskState state : TaskState.values()) {
              counts.put(state.sql(), 0);
            }
            for (JsonObject task : tasks) {
              counts.put(task.getString("state"), counts.getInteger(task.getString("state")) + 1);
            }
            return new JsonObject()
                .put("id", batch.getUUID("id").toString())
                .put("size", batch.getInteger("size"))
                .put("createdAt", batch.getOffsetDateTime("created_at").toInstant().toString())
                .put("counts", counts)
                .put("tasks", new JsonArray(new ArrayList<>(tasks)));
          });
        });
  }

  /** Succeeds when the database answers. */
  public Future<Void> ping() {
    return pool.query(sql.get("ping")).execute().mapEmpty();
  }

  // ---- grouped statements -------------------------------------------------------------------

  private Future<List<Void>> flushInserts(List<List<NewTask>> groups) {
    int total = 0;
    for (List<NewTask> group : groups) {
      for (NewTask task : group) {
        total += task.dispatchTo() == null ? 1 : 2; // a dispatched task is journaled claimed too
      }
    }
    int expected = total;
    return pool.preparedQuery(sql.get("insert_tasks")).execute(insertParams(groups, now())).compose(rows -> {
      if (rows.rowCount() != expected) {
        return Future.failedFuture(new IllegalStateException(
            "insert journaled " + rows.rowCount() + " of " + expected + " events"));
      }
      List<Void> answers = new ArrayList<>(groups.size());
      List<UUID> ids = new ArrayList<>();
      for (List<NewTask> group : groups) {
        answers.add(null);
        group.forEach(task -> ids.add(task.id()));
      }
      changed(ids);
      return Future.succeededFuture(answers);
    });
  }

  private static Tuple insertParams(List<List<NewTask>> groups, OffsetDateTime now) {
    int n = 0;
    for (List<NewTask> group : groups) {
      n += group.size();
    }
    UUID[] ids = new UUID[n];
    String[] queues = new String[n];
    String[] types = new String[n];
    String[] payloads = new String[n];
    Integer[] priorities = new Integer[n];
    OffsetDateTime[] runAts = new OffsetDateTime[n];
    Integer[] maxAttempts = new Integer[n];
    Long[] timeouts = new Long[n];
    UUID[] batchIds = new UUID[n];
    String[] workers = new String[n];
    OffsetDateTime[] leaseUntil = new OffsetDateTime[n];
    String[] tenants = new String[n];
    Map<UUID, Integer> batchSizes = new HashMap<>();
    Map<UUID, UUID[]> batchRanges = new HashMap<>();
    int i = 0;
    for (List<NewTask> group : groups) {
      for (NewTask task : group) {
        ids[i] = task.id();
        queues[i] = task.queue();
        types[i] = task.type();
        payloads[i] = task.payloadJson();
        priorities[i] = task.priority();
        runAts[i] = OffsetDateTime.ofInstant(task.runAt(), ZoneOffset.UTC);
        maxAttempts[i] = task.maxAttempts();
        timeouts[i] = task.timeoutMs();
        batchIds[i] = task.batchId();
        workers[i] = task.dispatchTo();
        leaseUntil[i] = task.leaseUntil() == null ? null : OffsetDateTime.ofInstant(task.leaseUntil(), ZoneOffset.UTC);
        tenants[i] = task.tenant();
        if (task.batchId() != null) {
          batchSizes.merge(task.batchId(), 1, Integer::sum);
          UUID[] range = batchRanges.computeIfAbsent(task.batchId(), b -> new UUID[] {task.id(), task.id()});
          if (TaskIds.compare(task.id(), range[0]) < 0) {
            range[0] = task.id();
          }
          if (TaskIds.compare(task.id(), range[1]) > 0) {
            range[1] = task.id();
          }
        }
        i++;
      }
    }
    UUID[] batches = batchSizes.keySet().toArray(new UUID[0]);
    Integer[] sizes = new Integer[batches.length];
    UUID[] firsts = new UUID[batches.length];
    UUID[] lasts = new UUID[batches.length];
    for (int b = 0; b < batches.length; b++) {
      sizes[b] = batchSizes.get(batches[b]);
      firsts[b] = batchRanges.get(batches[b])[0];
      lasts[b] = batchRanges.get(batches[b])[1];
    }
    return Tuple.wrap(new Object[] {ids, queues, types, payloads, priorities, runAts, maxAttempts, timeouts,
        batchIds, now, batches, sizes, workers, leaseUntil, firsts, lasts, tenants});
  }

  private Future<List<Lease>> flushClaims(List<ClaimRequest> requests) {
    int n = requests.size();
    UUID[] ids = new UUID[n];
    Long[] versions = new Long[n];
    String[] workers = new String[n];
    OffsetDateTime[] deadlines = new OffsetDateTime[n];
    OffsetDateTime now = now();
    for (int i = 0; i < n; i++) {
      ClaimRequest request = requests.get(i);
      ids[i] = request.taskId;
      versions[i] = request.expectedVersion;
      workers[i] = request.workerId;
      deadlines[i] = now.plus(request.leaseFor);
    }
    return pool.preparedQuery(sql.get("claim"))
        .execute(Tuple.of(ids, versions, workers, deadlines, now))
        .map(rows -> {
          Map<UUID, Row> claimed = new HashMap<>();
          for (Row row : rows) {
            claimed.put(row.getUUID("id"), row);
          }
          changed(new ArrayList<>(claimed.keySet()));
          List<Lease> answers = new ArrayList<>(n);
          for (ClaimRequest request : requests) {
            // A duplicate request for one task in one group gets the lease once.
            Row row = claimed.remove(request.taskId);
            answers.add(row == null ? null
                : new Lease(request.taskId, request.workerId, row.getLong("lease_version"), row.getInteger("attempt")));
          }
          return answers;
        });
  }

  private Future<List<TaskState>> flushFinishes(List<FinishRequest> requests) {
    int n = requests.size();
    LeaseColumns leases = LeaseColumns.of(requests, FinishRequest::lease);
    String[] states = new String[n];
    String[] results = new String[n];
    String[] errors = new String[n];
    String[] reasons = new String[n];
    OffsetDateTime[] runAts = new OffsetDateTime[n];
    Integer[] attemptDeltas = new Integer[n];
    Integer[] versionBumps = new Integer[n];
    for (int i = 0; i < n; i++) {
      FinishRequest request = requests.get(i);
      states[i] = request.to.sql();
      results[i] = request.result == null ? null : request.result.encode();
      errors[i] = request.error == null ? null : request.error.encode();
      reasons[i] = request.reason;
      runAts[i] = request.runAt == null ? null : OffsetDateTime.ofInstant(request.runAt, ZoneOffset.UTC);
      attemptDeltas[i] = request.attemptDelta;
      versionBumps[i] = request.versionBump;
    }
    return pool.preparedQuery(sql.get("finish"))
        .execute(Tuple.wrap(new Object[] {leases.ids, leases.versions, leases.workers, states, results, errors, reasons,
            runAts, attemptDeltas, versionBumps, now()}))
        .map(rows -> {
          Map<UUID, TaskState> landed = new HashMap<>();
          for (Row row : rows) {
            landed.put(row.getUUID("id"), TaskState.parse(row.getString("state")));
          }
          changed(new ArrayList<>(landed.keySet()));
          return perRequest(requests, FinishRequest::lease, landed);
        });
  }

  private Future<List<Heartbeat>> flushHeartbeats(List<HeartbeatRequest> requests) {
    LeaseColumns leases = LeaseColumns.of(requests, HeartbeatRequest::lease);
    OffsetDateTime now = now();
    OffsetDateTime[] deadlines = new OffsetDateTime[requests.size()];
    for (int i = 0; i < deadlines.length; i++) {
      deadlines[i] = now.plus(requests.get(i).leaseFor);
    }
    return pool.preparedQuery(sql.get("heartbeat"))
        .execute(Tuple.of(leases.ids, leases.versions, leases.workers, deadlines, now))
        .map(rows -> {
          Map<UUID, Heartbeat> held = new HashMap<>();
          for (Row row : rows) {
            held.put(row.getUUID("id"), row.getBoolean("cancel_requested") ? Heartbeat.CANCEL_REQUESTED : Heartbeat.HELD);
          }
          List<Heartbeat> answers = perRequest(requests, HeartbeatRequest::lease, held);
          answers.replaceAll(beat -> beat == null ? Heartbeat.LOST : beat);
          return answers;
        });
  }

  private Future<List<Boolean>> flushProgress(List<ProgressRequest> requests) {
    LeaseColumns leases = LeaseColumns.of(requests, ProgressRequest::lease);
    Integer[] percents = new Integer[requests.size()];
    String[] messages = new String[requests.size()];
    for (int i = 0; i < percents.length; i++) {
      percents[i] = requests.get(i).percent;
      messages[i] = requests.get(i).message;
    }
    return pool.preparedQuery(sql.get("progress"))
        .execute(Tuple.of(leases.ids, leases.versions, leases.workers, percents, messages, now()))
        .map(rows -> {
          Map<UUID, Boolean> landed = new HashMap<>();
          rows.forEach(row -> landed.put(row.getUUID("id"), true));
          List<Boolean> answers = perRequest(requests, ProgressRequest::lease, landed);
          answers.replaceAll(ok -> ok != null);
          return answers;
        });
  }

  /**
   * Per request, what the statement returned for its task, or null when it returned nothing: the
   * lease was lost and the write refused, which is counted. A task named twice in one group gets
   * its answer once.
   */
  private <R, V> List<V> perRequest(List<R> requests, Function<R, Lease> lease, Map<UUID, V> landed) {
    List<V> answers = new ArrayList<>(requests.size());
    for (R request : requests) {
      V value = landed.remove(lease.apply(request).taskId());
      if (value == null) {
        fencedWrites.incrementAndGet();
      }
      answers.add(value);
    }
    return answers;
  }

  /** The lease columns of a group of fenced writes, as statement parameters. */
  private record LeaseColumns(UUID[] ids, Long[] versions, String[] workers) {
    static <R> LeaseColumns of(List<R> requests, Function<R, Lease> lease) {
      int n = requests.size();
      LeaseColumns columns = new LeaseColumns(new UUID[n], new Long[n], new String[n]);
      for (int i = 0; i < n; i++) {
        Lease l = lease.apply(requests.get(i));
        columns.ids[i] = l.taskId();
        columns.versions[i] = l.version();
        columns.workers[i] = l.workerId();
      }
      return columns;
    }
  }

  private static List<JsonObject> tasks(RowSet<Row> rows) {
    List<JsonObject> tasks = new ArrayList<>(rows.size());
    for (Row row : rows) {
      tasks.add(TaskRows.toJson(row));
    }
    return tasks;
  }

  private OffsetDateTime now() {
    return OffsetDateTime.ofInstant(clock.instant(), ZoneOffset.UTC);
  }

  /** A lease that lapsed and went back to pending. */
  public record Released(UUID id, String queue) {
  }

  private record ClaimRequest(UUID taskId, long expectedVersion, String workerId, Duration leaseFor) {
  }

  private record FinishRequest(Lease lease, TaskState to, JsonObject result, JsonObject error, String reason,
      java.time.Instant runAt, int attemptDelta, int versionBump) {
  }

  /** What a heartbeat learned. */
  public enum Heartbeat { HELD, CANCEL_REQUESTED, LOST }

  /** A task found by a cancel: its state before, and after. */
  public record Cancelled(UUID id, TaskState before, TaskState after) {
  }

  /** The first answer given under an Idempotency-Key, and the hash of the request that got it. */
  public record IdempotentAnswer(String requestHash, JsonObject response) {
  }

  private record HeartbeatRequest(Lease lease, Duration leaseFor) {
  }

  private record ProgressRequest(Lease lease, int percent, String message) {
  }
}
