package dev.taskline.journal;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.Cancelled;
import dev.taskline.model.ClaimGate;
import dev.taskline.model.Expired;
import dev.taskline.model.GatedClaim;
import dev.taskline.model.Heartbeat;
import dev.taskline.model.IdempotentAnswer;
import dev.taskline.model.Insert;
import dev.taskline.model.Lease;
import dev.taskline.model.Reason;
import dev.taskline.model.Released;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.model.TaskState;
import dev.taskline.model.TickWrite;
import dev.taskline.model.problem.JournalBusyException;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.Tuple;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.BiFunction;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ObjLongConsumer;

/**
 * The journal's writes: every transition of a task is one statement that updates {@code tasks} and
 * appends to {@code task_events}, fenced by the lease where a worker writes; writes of one kind
 * that arrive together share a statement (see {@link GroupCommit}). Times come from the injected
 * clock. Reads for the API and for streams are {@link JournalReads}'; the reads here (page-in, the
 * pending count) decide what this node takes into custody.
 */
public final class Journal {

    /** Most requests one grouped statement carries; bounds statement size and latency. */
    private static final int MAX_GROUP = 2_000;
    /** Submissions (of up to a batch each) that one insert statement carries at most. */
    private static final int INSERT_GROUP = 64;

    private final Pool pool;
    private final Pool insertPool;
    private final Clock clock;
    private final Sql sql;
    private final GroupCommit<List<Insert>, Void> inserts;
    private final GroupCommit<ClaimRequest, Lease> claims;
    private final GroupCommit<GatedClaimRequest, GatedClaim> gatedClaims;
    private final GroupCommit<FinishRequest, TaskState> finishes;
    private final GroupCommit<HeartbeatRequest, Heartbeat> heartbeats;
    private final GroupCommit<ProgressRequest, Boolean> progresses;
    private final AtomicLong fencedWrites = new AtomicLong();
    private final ObjLongConsumer<String> writeTimes;
    private volatile Consumer<Collection<UUID>> changes = ids -> {};

    public Journal(Pool pool, Clock clock) {
        this(pool, pool, clock, (statement, nanos) -> {}, Integer.MAX_VALUE);
    }

    /**
     * @param insertPool        where new tasks are journaled ({@link JournalConnections#insertOptions})
     * @param writeTimes        told how long each grouped statement took, by statement name
     * @param maxWaitingInserts submissions that may wait for the insert in progress; beyond, {@link
     *                          #insert} fails at once with {@link JournalBusyException}
     */
    public Journal(Pool pool, Pool insertPool, Clock clock, ObjLongConsumer<String> writeTimes, int maxWaitingInserts) {
        this.pool = pool;
        this.insertPool = insertPool;
        this.clock = clock;
        this.writeTimes = writeTimes;
        this.sql = Sql.queries();
        this.inserts = new GroupCommit<>(INSERT_GROUP, maxWaitingInserts, timed("insert_tasks", this::flushInserts));
        this.claims = new GroupCommit<>(MAX_GROUP, timed("claim", this::flushClaims));
        this.gatedClaims = new GroupCommit<>(MAX_GROUP, timed("claim_gated", this::flushGatedClaims));
        this.finishes = new GroupCommit<>(MAX_GROUP, timed("finish", this::flushFinishes));
        this.heartbeats = new GroupCommit<>(MAX_GROUP, timed("heartbeat", this::flushHeartbeats));
        this.progresses = new GroupCommit<>(MAX_GROUP, timed("progress", this::flushProgress));
    }

    private <R, T> Function<List<R>, Future<List<T>>> timed(
            String statement, Function<List<R>, Future<List<T>>> flush) {
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

    /** Stale writes refused so far: finishes, heartbeats and progress of a lease that was lost. */
    public long fencedWrites() {
        return fencedWrites.get();
    }

    // ---- new tasks ------------------------------------------------------------------------------

    /** Submissions waiting for the insert statement in progress to return. */
    public int waitingInserts() {
        return inserts.waiting();
    }

    /**
     * Journals new tasks, all or nothing; completes after the commit, or fails at once with {@link
     * JournalBusyException} when a full insert's worth already waits.
     */
    public Future<Void> insert(List<Insert> tasks) {
        return guard(inserts.submit(tasks));
    }

    /** The first answer given under an Idempotency-Key that is still live, or null. */
    public Future<IdempotentAnswer> idempotentAnswer(String key) {
        return guard(pool.preparedQuery(sql.get("idempotency_lookup")).execute(Tuple.of(key, now())))
                .map(rows -> rows.size() == 0
                        ? null
                        : IdempotentAnswers.fromRow(rows.iterator().next()));
    }

    /**
     * Journals new tasks under an Idempotency-Key, in one transaction with the key and the answer
     * it stands for. When another request holds the key, inserts nothing and answers with what that
     * request stored; the unique key decides between racing requests.
     *
     * @return null when this request took the key and its tasks are journaled
     */
    public Future<IdempotentAnswer> insertIdempotent(
            String key, String requestHash, List<Insert> tasks, Duration keepFor) {
        OffsetDateTime now = now();
        Object answer = IdempotentAnswers.stored(tasks);
        return guard(pool.withTransaction(conn -> conn.preparedQuery(sql.get("idempotency_claim"))
                        .execute(Tuple.of(key, requestHash, answer, now, now.plus(keepFor)))
                        .compose(claimed -> {
                            if (claimed.size() == 0) {
                                return Future.succeededFuture(false);
                            }
                            return conn.preparedQuery(sql.get("insert_tasks"))
                                    .execute(insertParams(List.of(tasks), now))
                                    .map(true);
                        })))
                .compose(inserted -> inserted
                        ? Future.succeededFuture((IdempotentAnswer) null)
                                .onSuccess(v -> changed(
                                        tasks.stream().map(t -> t.task().id()).toList()))
                        // The key's owner committed before our insert gave up on it, so its row is visible now.
                        : idempotentAnswer(key).map(found -> found != null ? found : IdempotentAnswer.VANISHED));
    }

    /**
     * Decides schedules' ticks, across nodes: in one transaction, the ticks no node decided yet are
     * journaled (ticks_decide, under the schedules' share locks) and the tasks of those that fire are
     * inserted. A tick another node decided first changes nothing and comes back {@code LOST}; one of
     * a schedule paused or deleted meanwhile, {@code GONE}. Answers in the order of {@code writes}.
     */
    public Future<List<TickWrite.Decision>> decideTicks(List<TickWrite> writes, String nodeId) {
        int n = writes.size();
        UUID[] schedules = new UUID[n];
        OffsetDateTime[] ticks = new OffsetDateTime[n];
        UUID[] tasks = new UUID[n];
        String[] reasons = new String[n];
        String[] details = new String[n];
        Long[] counts = new Long[n];
        Boolean[] skipIfRunning = new Boolean[n];
        for (int i = 0; i < n; i++) {
            TickWrite w = writes.get(i);
            schedules[i] = w.scheduleId();
            ticks[i] = utc(w.tickAt());
            tasks[i] = w.task() == null ? null : w.task().task().id();
            reasons[i] = w.reason();
            details[i] = w.detail();
            counts[i] = w.ticks();
            skipIfRunning[i] = w.skipIfRunning();
        }
        OffsetDateTime now = now();
        List<Insert> fired = new ArrayList<>();
        return guard(pool.withTransaction(conn -> conn.preparedQuery(sql.get("ticks_decide"))
                        .execute(Tuple.wrap(new Object[] {
                            schedules, ticks, tasks, reasons, details, counts, skipIfRunning, now, nodeId
                        }))
                        .compose(rows -> {
                            Map<UUID, Row> live = new HashMap<>();
                            Map<TickWrite.Tick, Row> decided = new HashMap<>();
                            for (Row row : rows) {
                                if ("live".equals(row.getString("outcome"))) {
                                    live.put(row.getUUID("schedule_id"), row);
                                } else {
                                    decided.put(
                                            new TickWrite.Tick(
                                                    row.getUUID("schedule_id"),
                                                    row.getOffsetDateTime("tick_at")
                                                            .toInstant()),
                                            row);
                                }
                            }
                            List<TickWrite.Decision> answers = new ArrayList<>(n);
                            for (TickWrite w : writes) {
                                Row row = decided.get(w.tick());
                                if (row != null && "fired".equals(row.getString("outcome"))) {
                                    fired.add(w.task());
                                    answers.add(new TickWrite.Decision(w, TickWrite.Outcome.FIRED, null));
                                } else if (row != null) {
                                    answers.add(new TickWrite.Decision(
                                            w, TickWrite.Outcome.SKIPPED, row.getString("reason")));
                                } else {
                                    answers.add(new TickWrite.Decision(
                                            w,
                                            live.containsKey(w.scheduleId())
                                                    ? TickWrite.Outcome.LOST
                                                    : TickWrite.Outcome.GONE,
                                            null));
                                }
                            }
                            if (fired.isEmpty()) {
                                return Future.succeededFuture(answers);
                            }
                            return conn.preparedQuery(sql.get("insert_tasks"))
                                    .execute(insertParams(List.of(fired), now))
                                    .map(answers);
                        })))
                .onSuccess(answers ->
                        changed(fired.stream().map(i -> i.task().id()).toList()));
    }

    // ---- an attempt's writes, fenced by its lease -----------------------------------------------

    /** Claims a waiting task seen at {@code expectedVersion}; null when someone else got it first. */
    public Future<Lease> claim(UUID taskId, long expectedVersion, String workerId, Duration leaseFor) {
        return guard(claims.submit(new ClaimRequest(taskId, expectedVersion, workerId, leaseFor)));
    }

    /**
     * Claims a waiting task through its queue's {@code gate}: only while its concurrency key has room
     * and its rate budget has a start left, on any node; the counts and the claim are decided under
     * the gate's locks, in one transaction. {@link GatedClaim#refused} says which gate held it (the
     * task is still pending); with neither, a null lease means someone else got it first.
     */
    public Future<GatedClaim> claimGated(
            UUID taskId, long expectedVersion, String workerId, Duration leaseFor, ClaimGate gate) {
        return guard(gatedClaims.submit(
                new GatedClaimRequest(new ClaimRequest(taskId, expectedVersion, workerId, leaseFor), gate)));
    }

    /**
     * The handler returned {@code result}.
     *
     * @return the state the task is now in; null (and counted) when the lease was lost
     */
    public Future<TaskState> succeed(Lease lease, JsonObject result) {
        return end(lease, TaskState.SUCCEEDED, result, null, Reason.SUCCEEDED, null, Attempts.COUNTED);
    }

    /** The attempt failed and the task will not be tried again: it had no attempts left, or the failure is permanent. */
    public Future<TaskState> fail(Lease lease, JsonObject error, boolean permanent) {
        return end(
                lease,
                TaskState.FAILED,
                null,
                error,
                permanent ? Reason.FAILED_PERMANENTLY : Reason.FAILED,
                null,
                Attempts.COUNTED);
    }

    /**
     * As {@link #succeed}, for a worker that cannot have heard of a cancel request (a remote one):
     * the task ends cancelled instead when someone asked meanwhile, its result kept.
     */
    public Future<TaskState> succeedOrCancelled(Lease lease, JsonObject result) {
        return end(lease, TaskState.SUCCEEDED, result, null, Reason.SUCCEEDED, null, Attempts.COUNTED, true);
    }

    /** As {@link #fail}, ending the task cancelled instead when someone asked meanwhile. */
    public Future<TaskState> failOrCancelled(Lease lease, JsonObject error, boolean permanent) {
        return end(
                lease,
                TaskState.FAILED,
                null,
                error,
                permanent ? Reason.FAILED_PERMANENTLY : Reason.FAILED,
                null,
                Attempts.COUNTED,
                true);
    }

    /** The attempt stopped because someone asked to cancel the task; what it returned is kept. */
    public Future<TaskState> cancelled(Lease lease, JsonObject result, JsonObject error) {
        return end(lease, TaskState.CANCELLED, result, error, Reason.CANCELLED, null, Attempts.COUNTED);
    }

    /**
     * The attempt failed and counts; the task is tried again at {@code due}.
     *
     * @return pending, or cancelled when someone asked meanwhile; null when the lease was lost
     */
    public Future<TaskState> retryAt(Lease lease, Instant due, JsonObject error) {
        return end(lease, TaskState.PENDING, null, error, Reason.RETRY_SCHEDULED, due, Attempts.COUNTED);
    }

    /** The handler asked to run again at {@code due}; the attempt does not count. As {@link #retryAt} otherwise. */
    public Future<TaskState> snoozeUntil(Lease lease, Instant due) {
        return end(lease, TaskState.PENDING, null, null, Reason.SNOOZED, due, Attempts.NOT_COUNTED);
    }

    /**
     * Hands a task back at shutdown: pending and due now, the attempt not counted, and the version
     * bumped so that the holder is fenced at once and any node may claim it.
     */
    public Future<TaskState> release(Lease lease) {
        return end(lease, TaskState.PENDING, null, null, Reason.RELEASED, clock.instant(), Attempts.HANDED_BACK);
    }

    /**
     * As {@link #release}, for a task whose handler never started (leased ahead of a slot, or for a
     * remote worker that was never told of it): its first start's deadline, if any, still holds.
     * ({@link #release} and {@link #snoozeUntil} drop it: a handler ran, so the task did start.)
     */
    public Future<TaskState> handBackUnstarted(Lease lease) {
        return end(lease, TaskState.PENDING, null, null, Reason.RELEASED, clock.instant(), Attempts.UNSTARTED);
    }

    /** Extends a lease, and tells whether the task was asked to cancel meanwhile. */
    public Future<Heartbeat> heartbeat(Lease lease, Duration leaseFor) {
        return guard(heartbeats.submit(new HeartbeatRequest(lease, leaseFor)));
    }

    /** Writes the attempt's latest progress; false (and counted) when the lease was lost. */
    public Future<Boolean> progress(Lease lease, int percent, String message) {
        return guard(progresses.submit(new ProgressRequest(lease, percent, message)));
    }

    private Future<TaskState> end(
            Lease lease,
            TaskState to,
            JsonObject result,
            JsonObject error,
            Reason reason,
            Instant runAt,
            Attempts attempts) {
        return end(lease, to, result, error, reason, runAt, attempts, false);
    }

    /** @param cancelWins a cancel request, if any, ends the task cancelled instead (see the finish statement) */
    private Future<TaskState> end(
            Lease lease,
            TaskState to,
            JsonObject result,
            JsonObject error,
            Reason reason,
            Instant runAt,
            Attempts attempts,
            boolean cancelWins) {
        return guard(finishes.submit(new FinishRequest(lease, to, result, error, reason, runAt, attempts, cancelWins)));
    }

    /**
     * What an attempt's end does to the task's counts: a counted attempt stays spent; one that does
     * not count is given back; a hand-back also bumps the version, so that the holder is fenced. An
     * attempt given back after its handler ran drops the task's first-start deadline (the task did
     * start, and with its attempt count back at 0 the deadline would otherwise hold again and could
     * expire it); one given back unstarted keeps it.
     */
    private enum Attempts {
        COUNTED(0, 0, false),
        NOT_COUNTED(-1, 0, true),
        HANDED_BACK(-1, 1, true),
        UNSTARTED(-1, 1, false);

        final int attemptDelta;
        final int versionBump;
        final boolean dropsDeadline;

        Attempts(int attemptDelta, int versionBump, boolean dropsDeadline) {
            this.attemptDelta = attemptDelta;
            this.versionBump = versionBump;
            this.dropsDeadline = dropsDeadline;
        }
    }

    /**
     * The secret named {@code name} (32 random bytes) that every node of this journal shares: the
     * one this call makes if it is the first to ask for it, else the one written before.
     */
    public Future<byte[]> sharedSecret(String name) {
        byte[] candidate = new byte[32];
        new SecureRandom().nextBytes(candidate);
        return guard(pool.preparedQuery(sql.get("secret_put"))
                        .execute(Tuple.of(name, Buffer.buffer(candidate), now()))
                        .compose(v -> pool.preparedQuery(sql.get("secret_get")).execute(Tuple.of(name))))
                .map(rows -> rows.iterator().next().getBuffer("secret").getBytes());
    }

    // ---- what users and recovery do to tasks ----------------------------------------------------

    /**
     * Cancels tasks by id, or every task of a batch: pending ones at once, running ones by asking
     * their worker. Answers, per task found, its state before and after. {@code by}: the key that
     * asked, named in the events (null: none).
     */
    public Future<List<Cancelled>> cancel(List<UUID> ids, UUID batchId, String by) {
        return guard(pool.preparedQuery(sql.get("cancel"))
                        .execute(Tuple.of(ids.toArray(new UUID[0]), batchId, now(), askedBy(by))))
                .map(rows -> {
                    List<Cancelled> answers = new ArrayList<>(rows.size());
                    List<UUID> moved = new ArrayList<>();
                    for (Row row : rows) {
                        Cancelled task = new Cancelled(
                                row.getUUID("id"),
                                TaskState.parse(row.getString("before")),
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

    /**
     * Puts failed, cancelled or expired tasks back to pending with fresh attempts and no deadline;
     * returns those it moved.
     */
    public Future<List<Task>> retry(List<UUID> ids, String by) {
        return guard(pool.preparedQuery(sql.get("retry"))
                        .execute(Tuple.of(ids.toArray(new UUID[0]), now(), askedBy(by))))
                .map(Journal::tasks)
                .onSuccess(moved -> changed(moved.stream().map(Task::id).toList()));
    }

    /** The detail of an event a key asked for: who it was; null when no key is configured. */
    private static JsonObject askedBy(String keyId) {
        return keyId == null ? null : new JsonObject().put("by", keyId);
    }

    /**
     * Deletes finished tasks older than {@code ttl}, expired idempotency keys, rate-limit entries no
     * window can count any more and schedules' ticks decided before {@code ttl} (but each one's
     * newest), a batch at a time.
     */
    public Future<Integer> deleteOld(Duration finishedTtl, int limit) {
        OffsetDateTime now = now();
        OffsetDateTime cutoff = now.minus(finishedTtl);
        OffsetDateTime rateCutoff = now.minus(Duration.ofMillis(2 * QueueConfig.RateLimit.MOST_PER_MS));
        return guard(pool.preparedQuery(sql.get("delete_expired_keys"))
                        .execute(Tuple.of(now, limit))
                        .compose(v -> pool.preparedQuery(sql.get("delete_old_rate_starts"))
                                .execute(Tuple.of(rateCutoff, limit)))
                        .compose(v ->
                                pool.preparedQuery(sql.get("delete_old_ticks")).execute(Tuple.of(cutoff, limit)))
                        .compose(v -> pool.preparedQuery(sql.get("delete_finished"))
                                .execute(Tuple.of(cutoff, limit, TaskIds.least(cutoff.toInstant())))))
                .map(rows -> rows.iterator().next().getLong("deleted").intValue());
    }

    /** Puts lapsed leases of any node back to pending with a new version; returns them. */
    public Future<List<Released>> releaseExpired(int limit) {
        return changedTasks("release_expired", limit, Released::new);
    }

    /**
     * Ends tasks of any node that never started and are past the deadline of their first start:
     * expired, at most {@code limit} of them, soonest deadline first; returns them.
     */
    public Future<List<Expired>> expireOverdue(int limit) {
        return changedTasks("expire_overdue", limit, Expired::new);
    }

    /** Runs a sweep's {@code statement} ($1 now, $2 most rows), which answers the tasks it changed with their queues. */
    private <T> Future<List<T>> changedTasks(String statement, int limit, BiFunction<UUID, String, T> of) {
        return guard(pool.preparedQuery(sql.get(statement)).execute(Tuple.of(now(), limit)))
                .map(rows -> {
                    List<T> found = new ArrayList<>(rows.size());
                    List<UUID> ids = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        UUID id = row.getUUID("id");
                        found.add(of.apply(id, row.getString("queue")));
                        ids.add(id);
                    }
                    changed(ids);
                    return found;
                });
    }

    /** How many tasks of the queue wait in the journal, due now. */
    public Future<Long> pendingCount(String queue) {
        return guard(pool.preparedQuery(sql.get("pending_count")).execute(Tuple.of(queue, now())))
                .map(rows -> rows.iterator().next().getLong("pending"));
    }

    /**
     * Waiting tasks of a queue that are due and not in {@code exclude}, in the order they must run:
     * with {@code tenantsInTurn}, each tenant's best first, then each one's next.
     */
    public Future<List<Task>> pageIn(
            String queue, Collection<UUID> exclude, int limit, double agingPerSecond, boolean tenantsInTurn) {
        return guard(pool.preparedQuery(sql.get(tenantsInTurn ? "page_in_fair" : "page_in"))
                        .execute(Tuple.of(queue, now(), exclude.toArray(new UUID[0]), limit, agingPerSecond)))
                .map(Journal::tasks);
    }

    /** Tasks read back to be held again, as {@code page_in} and {@code retry} return them. */
    private static List<Task> tasks(RowSet<Row> rows) {
        List<Task> found = new ArrayList<>(rows.size());
        for (Row row : rows) {
            found.add(Task.builder(row.getUUID("id"), row.getString("queue"), row.getString("type"))
                    .payloadJson(row.getString("payload"))
                    .priority(row.getInteger("priority"))
                    .maxAttempts(row.getInteger("max_attempts"))
                    .timeoutMs(row.getLong("timeout_ms"))
                    .tenant(row.getString("tenant"))
                    .concurrencyKey(row.getString("concurrency_key"))
                    .startBy(Rows.instant(row, "start_by"))
                    .scheduled(row.getString("schedule"), Rows.instant(row, "scheduled_for"))
                    .runAt(row.getOffsetDateTime("run_at").toInstant())
                    .leased(row.getLong("lease_version"), row.getInteger("attempt"))
                    .build());
        }
        return found;
    }

    // ---- grouped statements -------------------------------------------------------------------

    private Future<List<Void>> flushInserts(List<List<Insert>> groups) {
        int total = 0;
        for (List<Insert> group : groups) {
            for (Insert insert : group) {
                total += insert.claimed() ? 2 : 1; // a claimed insert journals its claim too
            }
        }
        int expected = total;
        return insertPool
                .preparedQuery(sql.get("insert_tasks"))
                .execute(insertParams(groups, now()))
                .compose(rows -> {
                    if (rows.rowCount() != expected) {
                        return Future.failedFuture(new IllegalStateException(
                                "insert journaled " + rows.rowCount() + " of " + expected + " events"));
                    }
                    List<Void> answers = new ArrayList<>(groups.size());
                    List<UUID> ids = new ArrayList<>();
                    for (List<Insert> group : groups) {
                        answers.add(null);
                        group.forEach(insert -> ids.add(insert.task().id()));
                    }
                    changed(ids);
                    return Future.succeededFuture(answers);
                });
    }

    private static Tuple insertParams(List<List<Insert>> groups, OffsetDateTime now) {
        int n = 0;
        for (List<Insert> group : groups) {
            n += group.size();
        }
        InsertColumns c = new InsertColumns(n);
        Map<UUID, UUID[]> batchRanges = new HashMap<>();
        Map<UUID, Integer> batchSizes = new HashMap<>();
        int i = 0;
        for (List<Insert> group : groups) {
            for (Insert insert : group) {
                c.set(i++, insert);
                Task task = insert.task();
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
        // The order of insert_tasks' parameters ($1 to $21), as its comment in sql/ lists them.
        return Tuple.wrap(new Object[] {
            c.ids,
            c.queues,
            c.types,
            c.payloads,
            c.priorities,
            c.runAts,
            c.maxAttempts,
            c.timeouts,
            c.batchIds,
            now,
            batches,
            sizes,
            c.workers,
            c.leaseUntil,
            firsts,
            lasts,
            c.tenants,
            c.keys,
            c.startBys,
            c.schedules,
            c.scheduledFor
        });
    }

    /** The per-task columns of {@code insert_tasks}, one array a column. */
    private static final class InsertColumns {
        final UUID[] ids;
        final String[] queues;
        final String[] types;
        final String[] payloads;
        final Integer[] priorities;
        final OffsetDateTime[] runAts;
        final Integer[] maxAttempts;
        final Long[] timeouts;
        final UUID[] batchIds;
        final String[] workers;
        final OffsetDateTime[] leaseUntil;
        final String[] tenants;
        final String[] keys;
        final OffsetDateTime[] startBys;
        final String[] schedules;
        final OffsetDateTime[] scheduledFor;
        private final Memo<Instant, OffsetDateTime> runAtUtc = new Memo<>(Journal::utc);
        private final Memo<Instant, OffsetDateTime> leaseUtc = new Memo<>(Journal::utc);
        private final Memo<Instant, OffsetDateTime> startByUtc = new Memo<>(Journal::utc);

        InsertColumns(int n) {
            ids = new UUID[n];
            queues = new String[n];
            types = new String[n];
            payloads = new String[n];
            priorities = new Integer[n];
            runAts = new OffsetDateTime[n];
            maxAttempts = new Integer[n];
            timeouts = new Long[n];
            batchIds = new UUID[n];
            workers = new String[n];
            leaseUntil = new OffsetDateTime[n];
            tenants = new String[n];
            keys = new String[n];
            startBys = new OffsetDateTime[n];
            schedules = new String[n];
            scheduledFor = new OffsetDateTime[n];
        }

        void set(int i, Insert insert) {
            Task task = insert.task();
            ids[i] = task.id();
            queues[i] = task.queue();
            types[i] = task.type();
            payloads[i] = task.payloadJson();
            priorities[i] = task.priority();
            runAts[i] = runAtUtc.get(insert.runAt());
            maxAttempts[i] = task.maxAttempts();
            timeouts[i] = task.timeoutMs();
            batchIds[i] = task.batchId();
            workers[i] = insert.workerId();
            leaseUntil[i] = insert.leaseUntil() == null ? null : leaseUtc.get(insert.leaseUntil());
            tenants[i] = task.tenant();
            keys[i] = task.concurrencyKey();
            startBys[i] = insert.startBy() == null ? null : startByUtc.get(insert.startBy());
            if (task.schedule() != null) {
                schedules[i] = task.schedule();
                scheduledFor[i] = utc(task.scheduledFor());
            }
        }
    }

    private Future<List<Lease>> flushClaims(List<ClaimRequest> requests) {
        int n = requests.size();
        UUID[] ids = new UUID[n];
        Long[] versions = new Long[n];
        String[] workers = new String[n];
        OffsetDateTime[] deadlines = new OffsetDateTime[n];
        OffsetDateTime now = now();
        Memo<Duration, OffsetDateTime> deadline = new Memo<>(now::plus);
        for (int i = 0; i < n; i++) {
            ClaimRequest request = requests.get(i);
            ids[i] = request.taskId;
            versions[i] = request.expectedVersion;
            workers[i] = request.workerId;
            deadlines[i] = deadline.get(request.leaseFor);
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
                        answers.add(
                                row == null
                                        ? null
                                        : new Lease(
                                                request.taskId,
                                                request.workerId,
                                                row.getLong("lease_version"),
                                                row.getInteger("attempt")));
                    }
                    return answers;
                });
    }

    private Future<List<GatedClaim>> flushGatedClaims(List<GatedClaimRequest> requests) {
        int n = requests.size();
        UUID[] ids = new UUID[n];
        Long[] versions = new Long[n];
        String[] workers = new String[n];
        OffsetDateTime[] deadlines = new OffsetDateTime[n];
        String[] queues = new String[n];
        String[] keys = new String[n];
        Integer[] keyLimits = new Integer[n];
        String[] buckets = new String[n];
        Integer[] rateTasks = new Integer[n];
        Long[] ratePerMs = new Long[n];
        List<String> locks = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            GatedClaimRequest request = requests.get(i);
            ClaimGate gate = request.gate;
            ids[i] = request.claim.taskId;
            versions[i] = request.claim.expectedVersion;
            workers[i] = request.claim.workerId;
            queues[i] = gate.queue();
            keys[i] = gate.key();
            keyLimits[i] = gate.keyLimit();
            buckets[i] = gate.bucket();
            rateTasks[i] = gate.rateTasks();
            ratePerMs[i] = gate.ratePerMs();
            locks(gate, locks);
        }
        return pool.withTransaction(conn -> conn.query(sql.get("read_committed"))
                        .execute()
                        .compose(isolated -> conn.preparedQuery(sql.get("claim_keys_lock"))
                                .execute(Tuple.of((Object) locks.toArray(String[]::new))))
                        .compose(locked -> {
                            // The claim's time is read once its locks are held: ends and starts that committed
                            // while it waited for them were stamped before it (see claim_gated).
                            OffsetDateTime now = now();
                            Memo<Duration, OffsetDateTime> deadline = new Memo<>(now::plus);
                            for (int i = 0; i < n; i++) {
                                deadlines[i] = deadline.get(requests.get(i).claim.leaseFor);
                            }
                            return conn.preparedQuery(sql.get("claim_gated")).execute(Tuple.wrap(new Object[] {
                                ids, versions, workers, deadlines, now, queues, keys, keyLimits, buckets, rateTasks,
                                ratePerMs
                            }));
                        }))
                .map(rows -> {
                    Map<UUID, Row> answered = new HashMap<>();
                    List<UUID> claimed = new ArrayList<>();
                    for (Row row : rows) {
                        answered.put(row.getUUID("id"), row);
                        if (row.getString("refused") == null) {
                            claimed.add(row.getUUID("id"));
                        }
                    }
                    changed(claimed);
                    List<GatedClaim> answers = new ArrayList<>(n);
                    for (GatedClaimRequest request : requests) {
                        // A duplicate request for one task in one group gets the answer once.
                        Row row = answered.remove(request.claim.taskId);
                        String refused = row == null ? null : row.getString("refused");
                        if (row == null) {
                            answers.add(new GatedClaim(null, null, null));
                        } else if (refused != null) {
                            OffsetDateTime retryAt = row.getOffsetDateTime("retry_at");
                            answers.add(new GatedClaim(
                                    null,
                                    GatedClaim.Refusal.parse(refused),
                                    retryAt == null ? null : retryAt.toInstant()));
                        } else {
                            answers.add(new GatedClaim(
                                    new Lease(
                                            request.claim.taskId,
                                            request.claim.workerId,
                                            row.getLong("lease_version"),
                                            row.getInteger("attempt")),
                                    null,
                                    null));
                        }
                    }
                    return answers;
                });
    }

    /** The advisory locks a claim through {@code gate} takes, as texts no two different locks share. */
    private static void locks(ClaimGate gate, List<String> into) {
        if (gate.keyLimit() > 0) {
            into.add(gate.queue() + "/" + gate.key());
        }
        if (gate.bucket() != null) {
            // ':' is in no queue name, so no key's lock text can be a budget's.
            into.add("rate:" + gate.queue() + "/" + gate.bucket());
        }
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
        Boolean[] cancelWins = new Boolean[n];
        Boolean[] dropDeadlines = new Boolean[n];
        for (int i = 0; i < n; i++) {
            FinishRequest request = requests.get(i);
            cancelWins[i] = request.cancelWins;
            dropDeadlines[i] = request.attempts.dropsDeadline;
            states[i] = request.to.sql();
            results[i] = request.result == null ? null : request.result.encode();
            errors[i] = request.error == null ? null : request.error.encode();
            reasons[i] = request.reason.sql();
            runAts[i] = request.runAt == null ? null : utc(request.runAt);
            attemptDeltas[i] = request.attempts.attemptDelta;
            versionBumps[i] = request.attempts.versionBump;
        }
        return pool.preparedQuery(sql.get("finish"))
                .execute(Tuple.wrap(new Object[] {
                    leases.ids,
                    leases.versions,
                    leases.workers,
                    states,
                    results,
                    errors,
                    reasons,
                    runAts,
                    attemptDeltas,
                    versionBumps,
                    now(),
                    cancelWins,
                    dropDeadlines
                }))
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
        Memo<Duration, OffsetDateTime> deadline = new Memo<>(now::plus);
        for (int i = 0; i < deadlines.length; i++) {
            deadlines[i] = deadline.get(requests.get(i).leaseFor);
        }
        return pool.preparedQuery(sql.get("heartbeat"))
                .execute(Tuple.of(leases.ids, leases.versions, leases.workers, deadlines, now))
                .map(rows -> {
                    Map<UUID, Heartbeat> held = new HashMap<>();
                    for (Row row : rows) {
                        held.put(
                                row.getUUID("id"),
                                row.getBoolean("cancel_requested") ? Heartbeat.CANCEL_REQUESTED : Heartbeat.HELD);
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

    private static <T> Future<T> guard(Future<T> future) {
        return JournalFailures.guard(future);
    }

    private OffsetDateTime now() {
        return utc(clock.instant());
    }

    private static OffsetDateTime utc(Instant instant) {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }

    /**
     * The last conversion made for one column of a grouped statement: a group's rows mostly share
     * their times (one clock reading, one lease length per queue), so most rows reuse it.
     */
    private static final class Memo<K, V> {
        private final Function<K, V> convert;
        private K key;
        private V value;

        Memo(Function<K, V> convert) {
            this.convert = convert;
        }

        V get(K next) {
            if (!next.equals(key)) {
                value = convert.apply(next);
                key = next;
            }
            return value;
        }
    }

    private record ClaimRequest(UUID taskId, long expectedVersion, String workerId, Duration leaseFor) {}

    private record GatedClaimRequest(ClaimRequest claim, ClaimGate gate) {}

    private record FinishRequest(
            Lease lease,
            TaskState to,
            JsonObject result,
            JsonObject error,
            Reason reason,
            Instant runAt,
            Attempts attempts,
            boolean cancelWins) {}

    private record HeartbeatRequest(Lease lease, Duration leaseFor) {}

    private record ProgressRequest(Lease lease, int percent, String message) {}
}
