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

/**
 * All reads and writes of the journal. Each transition is one statement that updates
 * {@code tasks} and appends to {@code task_events}; writes of one kind that arrive together share
 * a statement (see {@link GroupCommit}). Times come from the injected clock.
 */
public final class Journal {

  /** Most requests one grouped statement carries; bounds statement size and latency. */
  private static final int MAX_GROUP = 2_000;

  private final Pool pool;
  private final Clock clock;
  private final Sql sql;
  private final GroupCommit<List<NewTask>, Void> inserts;
  private final GroupCommit<ClaimRequest, Lease> claims;
  private final GroupCommit<FinishRequest, Boolean> finishes;
  private final GroupCommit<HeartbeatRequest, Boolean> heartbeats;
  private final GroupCommit<ProgressRequest, Boolean> progresses;
  private final AtomicLong fencedWrites = new AtomicLong();

  public Journal(Pool pool, Clock clock) {
    this.pool = pool;
    this.clock = clock;
    this.sql = Sql.load("/sql/queries/tasks.sql");
    this.inserts = new GroupCommit<>(64, this::flushInserts);
    this.claims = new GroupCommit<>(MAX_GROUP, this::flushClaims);
    this.finishes = new GroupCommit<>(MAX_GROUP, this::flushFinishes);
    this.heartbeats = new GroupCommit<>(MAX_GROUP, this::flushHeartbeats);
    this.progresses = new GroupCommit<>(MAX_GROUP, this::flushProgress);
  }

  public Clock clock() {
    return clock;
  }

  /** Stale writes refused so far: finishes, heartbeats and progress of a lease that was lost. */
  public long fencedWrites() {
    return fencedWrites.get();
  }

  // ---- writes -------------------------------------------------------------------------------

  /** Journals new tasks, all or nothing; completes after the commit. */
  public Future<Void> insert(List<NewTask> tasks) {
    return inserts.submit(tasks);
  }

  /** Claims a waiting task seen at {@code expectedVersion}; null when someone else got it first. */
  public Future<Lease> claim(UUID taskId, long expectedVersion, String workerId, Duration leaseFor) {
    return claims.submit(new ClaimRequest(taskId, expectedVersion, workerId, leaseFor));
  }

  /** Ends an attempt in a terminal state; false (and counted) when the lease was lost. */
  public Future<Boolean> finish(Lease lease, TaskState to, JsonObject result, JsonObject error, String reason) {
    return finishes.submit(new FinishRequest(lease, to, result, error, reason));
  }

  /** Extends a lease; false when it was already lost, after which nothing this lease writes lands. */
  public Future<Boolean> heartbeat(Lease lease, Duration leaseFor) {
    return heartbeats.submit(new HeartbeatRequest(lease, leaseFor));
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
          for (Row row : rows) {
            released.add(new Released(row.getUUID("id"), row.getString("queue")));
          }
          return released;
        });
  }

  /** Waiting tasks of a queue that are due and not in {@code exclude}, in the order they must run. */
  public Future<List<StoredTask>> pageIn(String queue, Collection<UUID> exclude, int limit) {
    return pool.preparedQuery(sql.get("page_in"))
        .execute(Tuple.of(queue, now(), exclude.toArray(new UUID[0]), limit))
        .map(rows -> {
          List<StoredTask> found = new ArrayList<>(rows.size());
          for (Row row : rows) {
            found.add(new StoredTask(
                row.getUUID("id"), row.getString("queue"), row.getString("type"),
                new JsonObject(row.getString("payload")), row.getInteger("priority"),
                row.getLong("lease_version"), row.getInteger("attempt"), row.getInteger("max_attempts"),
                row.getLong("timeout_ms"), row.getOffsetDateTime("created_at").toInstant()));
          }
          return found;
        });
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
    Map<UUID, Integer> batchSizes = new HashMap<>();
    int i = 0;
    for (List<NewTask> group : groups) {
      for (NewTask task : group) {
        ids[i] = task.id();
        queues[i] = task.queue();
        types[i] = task.type();
        payloads[i] = task.payload().encode();
        priorities[i] = task.priority();
        runAts[i] = OffsetDateTime.ofInstant(task.runAt(), ZoneOffset.UTC);
        maxAttempts[i] = task.maxAttempts();
        timeouts[i] = task.timeoutMs();
        batchIds[i] = task.batchId();
        if (task.batchId() != null) {
          batchSizes.merge(task.batchId(), 1, Integer::sum);
        }
        i++;
      }
    }
    UUID[] batches = batchSizes.keySet().toArray(new UUID[0]);
    Integer[] sizes = new Integer[batches.length];
    for (int b = 0; b < batches.length; b++) {
      sizes[b] = batchSizes.get(batches[b]);
    }
    Tuple params = Tuple.of(ids, queues, types, payloads, priorities, runAts, maxAttempts, timeouts,
        batchIds, now(), batches, sizes);
    int total = n;
    return pool.preparedQuery(sql.get("insert_tasks")).execute(params).compose(rows -> {
      if (rows.rowCount() != total) {
        return Future.failedFuture(new IllegalStateException(
            "insert journaled " + rows.rowCount() + " of " + total + " tasks"));
      }
      List<Void> answers = new ArrayList<>(groups.size());
      for (int g = 0; g < groups.size(); g++) {
        answers.add(null);
      }
      return Future.succeededFuture(answers);
    });
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

  private Future<List<Boolean>> flushFinishes(List<FinishRequest> requests) {
    int n = requests.size();
    UUID[] ids = new UUID[n];
    Long[] versions = new Long[n];
    String[] workers = new String[n];
    String[] states = new String[n];
    String[] results = new String[n];
    String[] errors = new String[n];
    String[] reasons = new String[n];
    for (int i = 0; i < n; i++) {
      FinishRequest request = requests.get(i);
      ids[i] = request.lease.taskId();
      versions[i] = request.lease.version();
      workers[i] = request.lease.workerId();
      states[i] = request.to.sql();
      results[i] = request.result == null ? null : request.result.encode();
      errors[i] = request.error == null ? null : request.error.encode();
      reasons[i] = request.reason;
    }
    return pool.preparedQuery(sql.get("finish"))
        .execute(Tuple.of(ids, versions, workers, states, results, errors, reasons, now()))
        .map(rows -> fenced(requests, rows, r -> r.lease.taskId()));
  }

  private Future<List<Boolean>> flushHeartbeats(List<HeartbeatRequest> requests) {
    int n = requests.size();
    UUID[] ids = new UUID[n];
    Long[] versions = new Long[n];
    String[] workers = new String[n];
    OffsetDateTime[] deadlines = new OffsetDateTime[n];
    OffsetDateTime now = now();
    for (int i = 0; i < n; i++) {
      HeartbeatRequest request = requests.get(i);
      ids[i] = request.lease.taskId();
      versions[i] = request.lease.version();
      workers[i] = request.lease.workerId();
      deadlines[i] = now.plus(request.leaseFor);
    }
    return pool.preparedQuery(sql.get("heartbeat"))
        .execute(Tuple.of(ids, versions, workers, deadlines, now))
        .map(rows -> fenced(requests, rows, r -> r.lease.taskId()));
  }

  private Future<List<Boolean>> flushProgress(List<ProgressRequest> requests) {
    int n = requests.size();
    UUID[] ids = new UUID[n];
    Long[] versions = new Long[n];
    String[] workers = new String[n];
    Integer[] percents = new Integer[n];
    String[] messages = new String[n];
    for (int i = 0; i < n; i++) {
      ProgressRequest request = requests.get(i);
      ids[i] = request.lease.taskId();
      versions[i] = request.lease.version();
      workers[i] = request.lease.workerId();
      percents[i] = request.percent;
      messages[i] = request.message;
    }
    return pool.preparedQuery(sql.get("progress"))
        .execute(Tuple.of(ids, versions, workers, percents, messages, now()))
        .map(rows -> fenced(requests, rows, r -> r.lease.taskId()));
  }

  /** Which requests landed; those that did not were stale writes and are counted. */
  private <R> List<Boolean> fenced(List<R> requests, RowSet<Row> rows, java.util.function.Function<R, UUID> id) {
    Set<UUID> landed = new HashSet<>();
    for (Row row : rows) {
      landed.add(row.getUUID("id"));
    }
    List<Boolean> answers = new ArrayList<>(requests.size());
    for (R request : requests) {
      boolean ok = landed.contains(id.apply(request));
      if (!ok) {
        fencedWrites.incrementAndGet();
      }
      answers.add(ok);
    }
    return answers;
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

  private record FinishRequest(Lease lease, TaskState to, JsonObject result, JsonObject error, String reason) {
  }

  private record HeartbeatRequest(Lease lease, Duration leaseFor) {
  }

  private record ProgressRequest(Lease lease, int percent, String message) {
  }
}
