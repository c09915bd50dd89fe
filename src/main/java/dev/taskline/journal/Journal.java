package dev.taskline.journal;

import dev.taskline.config.QueueConfig;
import dev.taskline.journal.GroupedWrites.ClaimRequest;
import dev.taskline.journal.GroupedWrites.FinishRequest;
import dev.taskline.journal.GroupedWrites.GatedClaimRequest;
import dev.taskline.journal.GroupedWrites.HeartbeatRequest;
import dev.taskline.journal.GroupedWrites.ProgressRequest;
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
import dev.taskline.model.Settled;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.model.TaskState;
import dev.taskline.model.problem.JournalBusyException;
import io.vertx.core.Future;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import io.vertx.sqlclient.Tuple;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.ObjLongConsumer;

/**
 * The journal's writes: every transition of a task is one statement that updates {@code tasks} and
 * appends to {@code task_events}, fenced by the lease where a worker writes; writes of one kind
 * that arrive together share a statement ({@link GroupedWrites}). Times come from the injected
 * clock. Reads for the API and for streams are {@link JournalReads}'; the reads here (page-in, the
 * pending count) decide what this node takes into custody. Schedules' ticks are {@link
 * JournalSchedules}' to write, through this journal's pool and change listener.
 */
public final class Journal {

    private final Pool pool;
    private final Clock clock;
    private final Sql sql;
    private final GroupedWrites grouped;
    private final Sql.Bound<Params.InsertTasks> insertTasks;
    private final Sql.Bound<Params.IdempotencyClaim> idempotencyClaim;
    private final Sql.Bound<Params.PageIn> pageIn;
    private final Sql.Bound<Params.PageIn> pageInFair;
    private volatile JournalSignals signals = JournalSignals.NONE;
    private final HandedParents handedParents = new HandedParents();

    /** Statements of one kind in flight at once where the caller does not say. */
    public static final int STATEMENTS_IN_FLIGHT = 4;

    public Journal(Pool pool, Clock clock) {
        this(pool, pool, clock, (statement, nanos) -> {}, Integer.MAX_VALUE, STATEMENTS_IN_FLIGHT);
    }

    /**
     * @param insertPool        where new tasks are journaled ({@link JournalConnections#insertOptions})
     * @param writeTimes        told how long each grouped statement took, by statement name
     * @param maxWaitingInserts submissions that may wait for the insert in progress; beyond, {@link
     *                          #insert} fails at once with {@link JournalBusyException}
     * @param inFlight          grouped statements of one kind (inserts, claims, ends) out at once
     */
    public Journal(
            Pool pool,
            Pool insertPool,
            Clock clock,
            ObjLongConsumer<String> writeTimes,
            int maxWaitingInserts,
            int inFlight) {
        this.pool = pool;
        this.clock = clock;
        this.sql = Sql.queries();
        this.grouped = new GroupedWrites(
                pool,
                insertPool,
                clock,
                sql,
                this::changed,
                this::settled,
                writeTimes,
                new GroupedWrites.Bounds(maxWaitingInserts, inFlight));
        this.insertTasks = sql.bound("insert_tasks", Params.InsertTasks.class);
        this.idempotencyClaim = sql.bound("idempotency_claim", Params.IdempotencyClaim.class);
        this.pageIn = sql.bound("page_in", Params.PageIn.class);
        this.pageInFair = sql.bound("page_in_fair", Params.PageIn.class);
    }

    public Clock clock() {
        return clock;
    }

    Pool pool() {
        return pool;
    }

    GroupedWrites grouped() {
        return grouped;
    }

    /**
     * Gives the journal the port it tells of committed writes; once, by the wiring (a second port
     * would silently take the first's place).
     */
    public void signals(JournalSignals port) {
        if (signals != JournalSignals.NONE) {
            throw new IllegalStateException("the journal's signals are given once");
        }
        this.signals = port;
    }

    /** What a write that committed settled in flows. */
    void settled(Settled settled) {
        if (!settled.empty()) {
            for (Task child : settled.ready()) {
                handedParents.ready(
                        child.id(), child.leaseVersion(), settled.readyParents().get(child.id()));
            }
            signals.settled(settled);
        }
    }

    HandedParents handedParents() {
        return handedParents;
    }

    /** The tasks that got new events in a write that committed. */
    void changed(Collection<UUID> ids) {
        if (!ids.isEmpty()) {
            signals.changed(ids);
        }
    }

    /**
     * Why the journal refused a write for good (a value it cannot keep), or null when {@code failure}
     * is of another kind: the journal down or busy, a conflict the same write may get past later.
     */
    public static String refusal(Throwable failure) {
        return JournalFailures.refusal(failure);
    }

    /** Stale writes refused so far: finishes, heartbeats and progress of a lease that was lost. */
    public long fencedWrites() {
        return grouped.fencedWrites();
    }

    // ---- new tasks ------------------------------------------------------------------------------

    /** Submissions waiting for the insert statement in progress to return. */
    public int waitingInserts() {
        return grouped.waitingInserts();
    }

    /**
     * Journals new tasks, all or nothing; completes after the commit, or fails at once with {@link
     * JournalBusyException} when a full insert's worth already waits.
     */
    public Future<Void> insert(List<Insert> tasks) {
        return guard(grouped.insert(tasks));
    }

    /** The first answer given under an Idempotency-Key that is still live, or null. */
    public Future<IdempotentAnswer> idempotentAnswer(String key) {
        return idempotencyRow(key).map(row -> row == null ? null : IdempotentAnswers.fromRow(row));
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
        return underKey(
                        key,
                        requestHash,
                        IdempotentAnswers.stored(tasks),
                        keepFor,
                        now,
                        conn -> conn.preparedQuery(insertTasks.text())
                                .execute(insertTasks.bind(InsertRows.params(List.of(tasks), now))))
                .compose(inserted -> inserted
                        ? Future.succeededFuture((IdempotentAnswer) null)
                                .onSuccess(v -> changed(
                                        tasks.stream().map(t -> t.task().id()).toList()))
                        // The key's owner committed before our insert gave up on it, so its row is visible now.
                        : idempotentAnswer(key).map(found -> found != null ? found : IdempotentAnswers.VANISHED));
    }

    /**
     * Takes an Idempotency-Key and, only if this request got it, runs {@code insert}, in one
     * transaction: true when both happened, false when another live request held the key (nothing
     * inserted). The unique key decides between racing requests.
     */
    Future<Boolean> underKey(
            String key,
            String requestHash,
            JsonObject answer,
            Duration keepFor,
            OffsetDateTime now,
            Function<SqlConnection, Future<?>> insert) {
        return guard(pool.withTransaction(conn -> conn.preparedQuery(idempotencyClaim.text())
                .execute(idempotencyClaim.bind(
                        new Params.IdempotencyClaim(key, requestHash, answer, now, now.plus(keepFor))))
                .compose(claimed -> claimed.size() == 0
                        ? Future.succeededFuture(false)
                        : insert.apply(conn).map(true))));
    }

    /** The row a live Idempotency-Key keeps (request_hash, response), or null. */
    Future<Row> idempotencyRow(String key) {
        Sql.Statement lookup = sql.statement("idempotency_lookup");
        return guard(pool.preparedQuery(lookup.text()).execute(lookup.bind("key", key, "now", now())))
                .map(rows -> rows.size() == 0 ? null : rows.iterator().next());
    }

    // ---- an attempt's writes, fenced by its lease -----------------------------------------------

    /** Claims a waiting task seen at {@code expectedVersion}; null when someone else got it first. */
    public Future<Lease> claim(UUID taskId, long expectedVersion, String workerId, Duration leaseFor) {
        return guard(grouped.claim(new ClaimRequest(taskId, expectedVersion, workerId, leaseFor)));
    }

    /**
     * Claims a waiting task through its queue's {@code gate}: only while its concurrency key has room
     * and its rate budget has a start left, on any node; the counts and the claim are decided under
     * the gate's locks, in one transaction. {@link GatedClaim#refused} says which gate held it (the
     * task is still pending); with neither, a null lease means someone else got it first.
     */
    public Future<GatedClaim> claimGated(
            UUID taskId, long expectedVersion, String workerId, Duration leaseFor, ClaimGate gate) {
        return guard(grouped.claimGated(
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
     * The handler suspended on a durable wait (its step opened by JournalSteps.open): pending again,
     * due at {@code due}, the attempt not counted; as {@link #snoozeUntil} otherwise.
     */
    public Future<TaskState> suspendUntil(Lease lease, Instant due) {
        return end(lease, TaskState.PENDING, null, null, Reason.SUSPENDED, due, Attempts.NOT_COUNTED);
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
        return guard(grouped.heartbeat(new HeartbeatRequest(lease, leaseFor)));
    }

    /** Writes the attempt's latest progress; false (and counted) when the lease was lost. */
    public Future<Boolean> progress(Lease lease, int percent, String message) {
        return guard(grouped.progress(new ProgressRequest(lease, percent, message)));
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
        return guard(grouped.finish(new FinishRequest(lease, to, result, error, reason, runAt, attempts, cancelWins)));
    }

    /**
     * The secret named {@code name} (32 random bytes) that every node of this journal shares: the
     * one this call makes if it is the first to ask for it, else the one written before.
     */
    public Future<byte[]> sharedSecret(String name) {
        byte[] candidate = new byte[32];
        new SecureRandom().nextBytes(candidate);
        Sql.Statement put = sql.statement("secret_put");
        Sql.Statement get = sql.statement("secret_get");
        return guard(pool.preparedQuery(put.text())
                        .execute(put.bind("name", name, "secret", Buffer.buffer(candidate), "now", now()))
                        .compose(v -> pool.preparedQuery(get.text()).execute(get.bind("name", name))))
                .map(rows -> rows.iterator().next().getBuffer("secret").getBytes());
    }

    // ---- what users and recovery do to tasks ----------------------------------------------------

    /**
     * Cancels tasks by id, or every task of a batch: pending ones at once, running ones by asking
     * their worker. Answers, per task found, its state before and after. {@code by}: the key that
     * asked, named in the events (null: none).
     */
    public Future<List<Cancelled>> cancel(List<UUID> ids, UUID batchId, String by) {
        Sql.Statement cancel = sql.statement("cancel");
        return guard(pool.preparedQuery(cancel.text())
                        .execute(cancel.bind(
                                "ids",
                                ids.toArray(new UUID[0]),
                                "batch_id",
                                batchId,
                                "now",
                                now(),
                                "detail",
                                askedBy(by))))
                .map(rows -> {
                    List<Cancelled> answers = new ArrayList<>(rows.size());
                    List<UUID> moved = new ArrayList<>();
                    for (Row row : rows) {
                        if (Rows.kind(row) != null) {
                            continue;
                        }
                        Cancelled task = new Cancelled(
                                row.getUUID("id"),
                                TaskState.parse(row.getString("before")),
                                TaskState.parse(row.getString("after")));
                        answers.add(task);
                        if (!task.before().terminal()) {
                            moved.add(task.id());
                        }
                    }
                    settleRows(rows, moved);
                    return answers;
                });
    }

    /**
     * Puts failed, cancelled or expired tasks back to pending with fresh attempts and no deadline;
     * returns those it moved. The tasks of a flow that a retried task's failure cancelled wait again,
     * blocked (see {@link JournalFlows}).
     */
    public Future<List<Task>> retry(List<UUID> ids, String by) {
        Sql.Statement retry = sql.statement("retry");
        OffsetDateTime now = now();
        // A flow task's retry puts back to blocked what its failure cancelled, in the same transaction.
        return guard(pool.withTransaction(conn -> conn.preparedQuery(retry.text())
                        .execute(retry.bind("ids", ids.toArray(new UUID[0]), "now", now, "detail", askedBy(by)))
                        .map(Journal::tasks)
                        .compose(moved ->
                                JournalFlows.reblock(conn, sql, moved, now).map(moved))))
                .onSuccess(moved -> changed(moved.stream().map(Task::id).toList()));
    }

    /** The detail of an event a key asked for: who it was; null when no key is configured. */
    private static JsonObject askedBy(String keyId) {
        return keyId == null ? null : new JsonObject().put("by", keyId);
    }

    /**
     * Deletes finished tasks older than {@code ttl}, expired idempotency keys and session revocations, rate-limit entries no
     * window can count any more and schedules' ticks decided before {@code ttl} (but each one's
     * newest), a batch at a time.
     */
    public Future<Integer> deleteOld(Duration finishedTtl, int limit) {
        OffsetDateTime now = now();
        OffsetDateTime cutoff = now.minus(finishedTtl);
        OffsetDateTime rateCutoff = now.minus(Duration.ofMillis(2 * QueueConfig.RateLimit.MOST_PER_MS));
        Sql.Statement keys = sql.statement("delete_expired_keys");
        Sql.Statement rateStarts = sql.statement("delete_old_rate_starts");
        Sql.Statement ticks = sql.statement("delete_old_ticks");
        Sql.Statement finished = sql.statement("delete_finished");
        Sql.Statement sessions = sql.statement("delete_expired_session_revocations");
        return guard(pool.preparedQuery(keys.text())
                        .execute(keys.bind("now", now, "most", limit))
                        .compose(v ->
                                pool.preparedQuery(sessions.text()).execute(sessions.bind("now", now, "most", limit)))
                        .compose(v -> pool.preparedQuery(rateStarts.text())
                                .execute(rateStarts.bind("cutoff", rateCutoff, "most", limit)))
                        .compose(v ->
                                pool.preparedQuery(ticks.text()).execute(ticks.bind("cutoff", cutoff, "most", limit)))
                        .compose(v -> pool.preparedQuery(finished.text())
                                .execute(finished.bind(
                                        "cutoff",
                                        cutoff,
                                        "most",
                                        limit,
                                        "least_id",
                                        TaskIds.least(cutoff.toInstant())))))
                .map(rows -> rows.iterator().next().getLong("deleted").intValue());
    }

    /**
     * Takeovers a task may have past its max attempts before a lapsed lease ends it failed: enough for
     * nodes that crash now and then, not for a task that makes them.
     */
    public static final int MOST_LAPSES = 3;

    private static final String LAPSED = new io.vertx.core.json.JsonObject()
            .put("type", "lease_expired")
            .put(
                    "message",
                    "its lease lapsed on every claim allowed (maxAttempts, and " + MOST_LAPSES
                            + " takeovers past them): whatever runs it dies or hangs")
            .encode();

    /**
     * Puts lapsed leases of any node back to pending with a new version, or ends failed those whose
     * attempts passed max attempts by {@link #MOST_LAPSES}; returns them.
     */
    public Future<List<Released>> releaseExpired(int limit) {
        return changedTasks(
                sql.statement("release_expired")
                        .bind("now", now(), "most", limit, "most_lapses", MOST_LAPSES, "lapsed_error", LAPSED),
                "release_expired",
                row -> new Released(
                        row.getUUID("id"), row.getString("queue"), "failed".equals(row.getString("state"))));
    }

    /**
     * Ends tasks of any node that never started and are past the deadline of their first start:
     * expired, at most {@code limit} of them, soonest deadline first; returns them.
     */
    public Future<List<Expired>> expireOverdue(int limit) {
        return changedTasks(
                sql.statement("expire_overdue").bind("now", now(), "most", limit),
                "expire_overdue",
                row -> new Expired(row.getUUID("id"), row.getString("queue")));
    }

    /** Runs a sweep's statement {@code name}, which answers the tasks it changed (no kind), then what their ends settled. */
    private <T> Future<List<T>> changedTasks(Tuple params, String name, Function<Row, T> of) {
        return guard(pool.preparedQuery(sql.statement(name).text()).execute(params))
                .map(rows -> {
                    List<T> found = new ArrayList<>(rows.size());
                    List<UUID> ids = new ArrayList<>(rows.size());
                    for (Row row : rows) {
                        if (Rows.kind(row) != null) {
                            continue;
                        }
                        found.add(of.apply(row));
                        ids.add(row.getUUID("id"));
                    }
                    settleRows(rows, ids);
                    return found;
                });
    }

    /**
     * Passes on what a statement's rows of kind 'ready', 'cancelled' and 'flow' settled (see
     * flow_settle), and the tasks that got events: {@code moved} and those.
     */
    private void settleRows(RowSet<Row> rows, List<UUID> moved) {
        Settled settlement = Rows.settled(rows);
        settlement.ready().forEach(task -> moved.add(task.id()));
        moved.addAll(settlement.cancelled());
        changed(moved);
        settled(settlement);
    }

    /** How many tasks of the queue wait in the journal, due now. */
    public Future<Long> pendingCount(String queue) {
        Sql.Statement count = sql.statement("pending_count");
        return guard(pool.preparedQuery(count.text()).execute(count.bind("queue", queue, "now", now())))
                .map(rows -> rows.iterator().next().getLong("pending"));
    }

    /**
     * Waiting tasks of a queue that are due and not in {@code exclude}, in the order they must run:
     * with {@code tenantsInTurn}, each tenant's best first, then each one's next.
     */
    public Future<List<Task>> pageIn(
            String queue, Collection<UUID> exclude, int limit, double agingPerSecond, boolean tenantsInTurn) {
        Sql.Bound<Params.PageIn> read = tenantsInTurn ? pageInFair : pageIn;
        return guard(pool.preparedQuery(read.text())
                        .execute(read.bind(
                                new Params.PageIn(queue, now(), exclude.toArray(new UUID[0]), limit, agingPerSecond))))
                .map(Journal::tasks);
    }

    /** Tasks read back to be held again, as {@code page_in} and {@code retry} return them. */
    private static List<Task> tasks(RowSet<Row> rows) {
        List<Task> found = new ArrayList<>(rows.size());
        for (Row row : rows) {
            found.add(Rows.task(row));
        }
        return found;
    }

    private static <T> Future<T> guard(Future<T> future) {
        return JournalFailures.guard(future);
    }

    private OffsetDateTime now() {
        return Times.utc(clock.instant());
    }
}
