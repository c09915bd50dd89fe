package dev.taskline.journal;

import dev.taskline.model.ClaimGate;
import dev.taskline.model.GatedClaim;
import dev.taskline.model.Heartbeat;
import dev.taskline.model.Insert;
import dev.taskline.model.Lease;
import dev.taskline.model.Reason;
import dev.taskline.model.Settled;
import dev.taskline.model.TaskIds;
import dev.taskline.model.TaskState;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.Collection;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Consumer;
import java.util.function.Function;
import java.util.function.ObjLongConsumer;

/**
 * The writes that arrive many at a time (inserts, claims, ends, heartbeats, progress), each kind
 * through a {@link GroupCommit} of its own: the requests that came while one statement was out go
 * together in the next, as columns of one statement. Here are the columns built and each request's
 * answer picked out of the rows; what each write means is {@link Journal}'s.
 */
final class GroupedWrites {

    /** Most requests one grouped statement carries; bounds statement size and latency. */
    private static final int MAX_GROUP = 2_000;
    /** Submissions (of up to a batch each) that one insert statement carries at most. */
    private static final int INSERT_GROUP = 64;

    private final Pool pool;
    private final Pool insertPool;
    private final Clock clock;
    private final Consumer<Collection<UUID>> changed;
    private final Consumer<Settled> settled;
    private final ObjLongConsumer<String> writeTimes;
    private final AtomicLong fencedWrites = new AtomicLong();
    private final Sql.Bound<Params.InsertTasks> insertTasks;
    private final Sql.Bound<Params.Claim> claim;
    private final Sql.Bound<Params.ClaimGated> claimGated;
    private final Sql.Bound<Params.Finish> finish;
    private final Sql.Bound<Params.Heartbeat> heartbeat;
    private final Sql.Bound<Params.Progress> progress;
    private final Sql.Statement readCommitted;
    private final Sql.Statement claimKeysLock;
    private final GroupCommit<List<Insert>, Void> inserts;
    private final GroupCommit<ClaimRequest, Lease> claims;
    private final GroupCommit<GatedClaimRequest, GatedClaim> gatedClaims;
    private final GroupCommit<FinishRequest, TaskState> finishes;
    private final GroupCommit<HeartbeatRequest, Heartbeat> heartbeats;
    private final GroupCommit<ProgressRequest, Boolean> progresses;

    /**
     * @param changed           told the tasks that got new events, after their statement committed
     * @param settled           told what ended flow tasks settled in their flows, after the commit
     * @param writeTimes        told how long each grouped statement took, by statement name
     * @param bounds            how many may wait, and how many statements may be out
     */
    GroupedWrites(
            Pool pool,
            Pool insertPool,
            Clock clock,
            Sql sql,
            Consumer<Collection<UUID>> changed,
            Consumer<Settled> settled,
            ObjLongConsumer<String> writeTimes,
            Bounds bounds) {
        int maxWaitingInserts = bounds.maxWaitingInserts();
        int inFlight = bounds.inFlight();
        this.pool = pool;
        this.insertPool = insertPool;
        this.clock = clock;
        this.changed = changed;
        this.settled = settled;
        this.writeTimes = writeTimes;
        this.insertTasks = sql.bound("insert_tasks", Params.InsertTasks.class);
        this.claim = sql.bound("claim", Params.Claim.class);
        this.claimGated = sql.bound("claim_gated", Params.ClaimGated.class);
        this.finish = sql.bound("finish", Params.Finish.class);
        this.heartbeat = sql.bound("heartbeat", Params.Heartbeat.class);
        this.progress = sql.bound("progress", Params.Progress.class);
        this.readCommitted = sql.statement("read_committed");
        this.claimKeysLock = sql.statement("claim_keys_lock");
        this.inserts =
                new GroupCommit<>(INSERT_GROUP, maxWaitingInserts, inFlight, timed("insert_tasks", this::flushInserts));
        this.claims = new GroupCommit<>(MAX_GROUP, Integer.MAX_VALUE, inFlight, timed("claim", this::flushClaims));
        this.gatedClaims =
                new GroupCommit<>(MAX_GROUP, Integer.MAX_VALUE, inFlight, timed("claim_gated", this::flushGatedClaims));
        this.finishes = new GroupCommit<>(MAX_GROUP, Integer.MAX_VALUE, inFlight, timed("finish", this::flushFinishes));
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

    /**
     * @param maxWaitingInserts submissions that may wait for an insert statement to go out
     * @param inFlight          statements of one kind out at once (inserts, claims, ends); heartbeats
     *                          and progress keep one, so that two reports of one task land in order
     */
    record Bounds(int maxWaitingInserts, int inFlight) {}

    /** A claim of a task seen pending at {@code expectedVersion}. */
    record ClaimRequest(UUID taskId, long expectedVersion, String workerId, Duration leaseFor) {}

    /** A claim through its queue's gate. */
    record GatedClaimRequest(ClaimRequest claim, ClaimGate gate) {}

    /** An attempt's end (see {@link Journal#succeed} and its siblings). */
    record FinishRequest(
            Lease lease,
            TaskState to,
            JsonObject result,
            JsonObject error,
            Reason reason,
            Instant runAt,
            Attempts attempts,
            boolean cancelWins) {}

    record HeartbeatRequest(Lease lease, Duration leaseFor) {}

    record ProgressRequest(Lease lease, int percent, String message) {}

    Future<Void> insert(List<Insert> tasks) {
        return inserts.submit(tasks);
    }

    Future<Lease> claim(ClaimRequest request) {
        return claims.submit(request);
    }

    Future<GatedClaim> claimGated(GatedClaimRequest request) {
        return gatedClaims.submit(request);
    }

    Future<TaskState> finish(FinishRequest request) {
        return finishes.submit(request);
    }

    Future<Heartbeat> heartbeat(HeartbeatRequest request) {
        return heartbeats.submit(request);
    }

    Future<Boolean> progress(ProgressRequest request) {
        return progresses.submit(request);
    }

    /** Submissions waiting for the insert statement in progress to return. */
    int waitingInserts() {
        return inserts.waiting();
    }

    /** Stale writes refused so far: finishes, heartbeats and progress of a lease that was lost. */
    long fencedWrites() {
        return fencedWrites.get();
    }

    private OffsetDateTime now() {
        return Times.utc(clock.instant());
    }

    private Future<List<Void>> flushInserts(List<List<Insert>> groups) {
        int expected = InsertRows.events(groups);
        return insertPool
                .preparedQuery(insertTasks.text())
                .execute(insertTasks.bind(InsertRows.params(groups, now())))
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
                    changed.accept(ids);
                    return Future.succeededFuture(answers);
                });
    }

    /**
     * A group's requests in the order of their tasks' ids as PostgreSQL orders uuids: each statement
     * locks its rows in the order of its columns, so two statements out at once (of this node or of
     * another) that share rows wait for each other rather than deadlock. Answers are matched by id.
     */
    static <R> List<R> inTaskOrder(List<R> requests, Function<R, UUID> id) {
        List<R> ordered = new ArrayList<>(requests);
        ordered.sort((a, b) -> TaskIds.compare(id.apply(a), id.apply(b)));
        return ordered;
    }

    private Future<List<Lease>> flushClaims(List<ClaimRequest> asked) {
        List<ClaimRequest> requests = inTaskOrder(asked, ClaimRequest::taskId);
        int n = requests.size();
        UUID[] ids = new UUID[n];
        Long[] versions = new Long[n];
        String[] workers = new String[n];
        OffsetDateTime[] deadlines = new OffsetDateTime[n];
        OffsetDateTime now = now();
        Times.Memo<Duration, OffsetDateTime> deadline = new Times.Memo<>(now::plus);
        for (int i = 0; i < n; i++) {
            ClaimRequest request = requests.get(i);
            ids[i] = request.taskId;
            versions[i] = request.expectedVersion;
            workers[i] = request.workerId;
            deadlines[i] = deadline.get(request.leaseFor);
        }
        return pool.preparedQuery(claim.text())
                .execute(claim.bind(new Params.Claim(ids, versions, workers, deadlines, now)))
                .map(rows -> {
                    Map<UUID, Row> claimed = new HashMap<>();
                    for (Row row : rows) {
                        claimed.put(row.getUUID("id"), row);
                    }
                    changed.accept(new ArrayList<>(claimed.keySet()));
                    List<Lease> answers = new ArrayList<>(n);
                    for (ClaimRequest request : asked) {
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

    private Future<List<GatedClaim>> flushGatedClaims(List<GatedClaimRequest> asked) {
        List<GatedClaimRequest> requests = inTaskOrder(asked, request -> request.claim.taskId);
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
        return pool.withTransaction(conn -> conn.query(readCommitted.text())
                        .execute()
                        .compose(isolated -> conn.preparedQuery(claimKeysLock.text())
                                .execute(claimKeysLock.bind("locks", locks.toArray(String[]::new))))
                        .compose(locked -> {
                            // The claim's time is read once its locks are held: ends and starts that committed
                            // while it waited for them were stamped before it (see claim_gated).
                            OffsetDateTime now = now();
                            Times.Memo<Duration, OffsetDateTime> deadline = new Times.Memo<>(now::plus);
                            for (int i = 0; i < n; i++) {
                                deadlines[i] = deadline.get(requests.get(i).claim.leaseFor);
                            }
                            return conn.preparedQuery(claimGated.text())
                                    .execute(claimGated.bind(new Params.ClaimGated(
                                            ids, versions, workers, deadlines, now, queues, keys, keyLimits, buckets,
                                            rateTasks, ratePerMs)));
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
                    changed.accept(claimed);
                    List<GatedClaim> answers = new ArrayList<>(n);
                    for (GatedClaimRequest request : asked) {
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
        return pool.preparedQuery(finish.text())
                .execute(finish.bind(finishParams(inTaskOrder(requests, request -> request.lease.taskId()))))
                .map(rows -> {
                    Finished done = finished(rows, requests);
                    done.tell();
                    return done.states();
                });
    }

    /**
     * One attempt's end on {@code conn}, inside a transaction of the caller's (a success that spawns
     * tasks): the statement the group runs, for one. What it settled and changed is told only once
     * the caller has committed ({@link Finished#tell}).
     */
    Future<Finished> finishOn(SqlConnection conn, FinishRequest request) {
        List<FinishRequest> one = List.of(request);
        return conn.preparedQuery(finish.text())
                .execute(finish.bind(finishParams(one)))
                .map(rows -> finished(rows, one));
    }

    /** What a finish statement did: each request's state (null: fenced), and what to tell once committed. */
    final class Finished {
        private final List<TaskState> states;
        private final List<UUID> moved;
        private final Settled settlement;

        private Finished(List<TaskState> states, List<UUID> moved, Settled settlement) {
            this.states = states;
            this.moved = moved;
            this.settlement = settlement;
        }

        List<TaskState> states() {
            return states;
        }

        /** Tells the listeners what the committed statement changed and settled. */
        void tell() {
            settled.accept(settlement);
            changed.accept(moved);
        }
    }

    private Finished finished(RowSet<Row> rows, List<FinishRequest> requests) {
        Map<UUID, TaskState> landed = new HashMap<>();
        for (Row row : rows) {
            if (Rows.kind(row) == null) {
                landed.put(row.getUUID("id"), TaskState.parse(row.getString("state")));
            }
        }
        List<UUID> moved = new ArrayList<>(landed.keySet());
        Settled settlement = Rows.settled(rows);
        settlement.ready().forEach(task -> moved.add(task.id()));
        moved.addAll(settlement.cancelled());
        return new Finished(perRequest(requests, FinishRequest::lease, landed), moved, settlement);
    }

    private Params.Finish finishParams(List<FinishRequest> requests) {
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
            runAts[i] = request.runAt == null ? null : Times.utc(request.runAt);
            attemptDeltas[i] = request.attempts.attemptDelta;
            versionBumps[i] = request.attempts.versionBump;
        }
        return new Params.Finish(
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
                dropDeadlines);
    }

    private Future<List<Heartbeat>> flushHeartbeats(List<HeartbeatRequest> requests) {
        LeaseColumns leases = LeaseColumns.of(requests, HeartbeatRequest::lease);
        OffsetDateTime now = now();
        OffsetDateTime[] deadlines = new OffsetDateTime[requests.size()];
        Times.Memo<Duration, OffsetDateTime> deadline = new Times.Memo<>(now::plus);
        for (int i = 0; i < deadlines.length; i++) {
            deadlines[i] = deadline.get(requests.get(i).leaseFor);
        }
        return pool.preparedQuery(heartbeat.text())
                .execute(heartbeat.bind(
                        new Params.Heartbeat(leases.ids, leases.versions, leases.workers, deadlines, now)))
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
        return pool.preparedQuery(progress.text())
                .execute(progress.bind(
                        new Params.Progress(leases.ids, leases.versions, leases.workers, percents, messages, now())))
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
}
