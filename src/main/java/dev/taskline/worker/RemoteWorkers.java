package dev.taskline.worker;

import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalReads;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.DurableStart;
import dev.taskline.model.Lease;
import dev.taskline.model.Parents;
import dev.taskline.model.StepWritten;
import dev.taskline.model.Task;
import dev.taskline.model.TaskState;
import dev.taskline.model.Wait;
import dev.taskline.model.problem.InvalidLeaseTokenException;
import dev.taskline.model.problem.ShuttingDownException;
import dev.taskline.queue.QueueSlots;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Runs the remote queues of this node: their tasks are claimed by workers in other processes over
 * HTTP, which then heartbeat, complete or fail them with the lease token they were given. It
 * composes the parts that each do one of those things, all on this verticle's event loop: the
 * {@link WaitingClaims} matched with tasks as they come, the {@link RemoteCustody} of the tasks
 * leased out (and its reconciliation with the journal), the {@link LeaseWrites} checked by token,
 * and the {@link WorkerRegistry} of who was heard from. The public methods may be called from any
 * thread: each runs on this verticle's loop and answers on the caller's.
 */
public final class RemoteWorkers extends VerticleBase {

    public static final String SECRET = "lease-token";

    private final Map<String, QueueSlots> queues;
    private final AttemptParts parts;
    private final Journal journal;
    private final JournalReads reads;
    private final TasklineMetrics metrics;
    private final Clock clock;
    private final long reconcileMs;
    private final WaitingClaims.Bounds claimBounds;
    private final WorkerRegistry registry;
    /** The journal's lease-token secret, once read; written on this loop, read from any thread. */
    private volatile LeaseTokens tokens;

    private RemoteCustody custody;
    private WaitingClaims claims;
    private LeaseWrites writes;
    private long reconcileTimer = -1;
    private boolean reconciling;
    private boolean stopping;
    /** Set once started: a queue's available signal that comes before is ignored. */
    private volatile boolean listening;

    /**
     * @param maxWaiting claims that may wait at once on one queue of this node
     * @param tenantMost of those, one tenant's
     */
    public RemoteWorkers(
            Collection<? extends QueueSlots> remoteQueues,
            AttemptParts parts,
            JournalReads reads,
            TasklineMetrics metrics,
            long reconcileMs,
            int maxWaiting,
            int tenantMost) {
        this.queues = new LinkedHashMap<>();
        remoteQueues.forEach(q -> this.queues.put(q.name(), q));
        this.parts = parts;
        this.journal = parts.journal;
        this.reads = reads;
        this.metrics = metrics;
        this.clock = parts.clock;
        this.reconcileMs = reconcileMs;
        this.claimBounds = new WaitingClaims.Bounds(maxWaiting, tenantMost, parts.bounds.maxClaimBytes());
        this.registry = new WorkerRegistry(clock);
    }

    /**
     * A task handed to a remote worker, with its lease and the token that names it, and for a flow
     * task what its parents ended with (empty for any other).
     */
    public record Claimed(
            Task task, Lease lease, String token, Instant expiresAt, Parents parents, DurableStart steps) {

        Claimed withParents(Parents read) {
            return new Claimed(task, lease, token, expiresAt, read, steps);
        }

        Claimed withSteps(DurableStart read) {
            return new Claimed(task, lease, token, expiresAt, parents, read);
        }

        /** What this task weighs in a claim's answer, near enough: its JSON text and the lease's. */
        long weight() {
            long bytes = weight(task);
            if (parents != null && !parents.byReference()) {
                bytes += utf8(parents.valuesJson()) + utf8(parents.statesJson());
            }
            if (steps != null) {
                for (Map.Entry<String, String> step : steps.steps().entrySet()) {
                    bytes += utf8(step.getKey()) + utf8(step.getValue()) + 4;
                }
            }
            return bytes;
        }

        /** What a task weighs in a claim's answer before its parents and steps are read. */
        static long weight(Task task) {
            return 400 + utf8(task.payloadJson()) + utf8(task.type()) + utf8(task.schedule());
        }

        private static long utf8(String text) {
            if (text == null) {
                return 0;
            }
            long bytes = text.length();
            for (int i = 0; i < text.length(); i++) {
                char c = text.charAt(i);
                // Surrogate pairs count 2 + 2: four bytes, as UTF-8 writes them.
                bytes += c < 0x80 ? 0 : c < 0x800 || Character.isSurrogate(c) ? 1 : 2;
            }
            return bytes;
        }
    }

    /** What a heartbeat learned: the lease's new end, and whether someone asked to cancel the task. */
    public record Beat(Instant expiresAt, boolean cancelRequested) {}

    /** A remote worker this node has heard from. */
    public record Worker(String name, String queue, int leases, Instant lastSeen, String tenant) {}

    /**
     * Which tasks a claim takes: of these types only (null: any), of this tenant only (null: any
     * tenant's, for a key that sees every tenant).
     */
    public record Want(Set<String> types, String tenant) {
        public static final Want ANY = new Want(null, null);

        boolean any() {
            return types == null && tenant == null;
        }

        boolean takes(Task task) {
            return (types == null || types.contains(task.type())) && (tenant == null || tenant.equals(task.tenant()));
        }
    }

    /** One item of a batch of completions. */
    public record Completion(UUID taskId, String token, JsonObject result, JsonArray spawn) {}

    /** One item of a batch of heartbeats (percent null: no progress). */
    public record Renewal(UUID taskId, String token, Integer percent, String message) {}

    @Override
    public Future<?> start() {
        GatedClaims gatedClaims = new GatedClaims(vertx, journal, clock);
        // The parts call each other through these, each on this loop: a slot freed in custody may be
        // what a waiting claim waits for (claims is read when a slot frees, not now); a hand-back goes
        // through a pass of its own. The token secret comes from the journal: until it has, no claim
        // is answered (the HTTP API is deployed after this verticle has started).
        custody = new RemoteCustody(parts.ends, reads, metrics, clock, () -> tokens, queue -> claims.serve(queue));
        claims = new WaitingClaims(context, queues, custody, gatedClaims, metrics, new ClaimsOwner(), claimBounds);
        writes = new LeaseWrites(queues, custody, registry, () -> tokens, parts);
        listening = true;
        return journal.sharedSecret(SECRET).map(secret -> {
            tokens = new LeaseTokens(secret);
            reconcileTimer = vertx.setPeriodic(reconcileMs, id -> {
                if (!reconciling) {
                    reconciling = true;
                    runOnce().onComplete(done -> reconciling = false);
                }
            });
            return null;
        });
    }

    @Override
    public Future<?> stop() {
        vertx.cancelTimer(reconcileTimer);
        claims.answerAll();
        return Future.succeededFuture();
    }

    /**
     * The queue's signal that tasks came into line, or that it was paused or resumed, from any thread:
     * the claims waiting on it look again. A queue that is not remote here is none of theirs.
     */
    public void available(String queue) {
        QueueSlots remote = queues.get(queue);
        if (listening && remote != null) {
            claims.wake(remote);
        }
    }

    /** Waiting claims are answered with nothing, and no new claim waits. */
    public Future<Void> drain() {
        return onContext(() -> {
            stopping = true;
            claims.answerAll();
            claims.handBackPrepared();
            return Future.succeededFuture();
        });
    }

    /**
     * The queue a lease token names, once its signature is checked (any thread).
     *
     * @throws InvalidLeaseTokenException when it is not a token of this journal's nodes
     */
    public String queueOf(String token) {
        return tokens.verify(token).queue();
    }

    public boolean serves(String queue) {
        return queues.containsKey(queue);
    }

    /**
     * Claims up to {@code max} tasks of a remote queue for {@code worker}, only those {@code want}
     * takes; when none is there, waits up to {@code waitMs} for one and answers with it at once,
     * else with none.
     */
    public Future<List<Claimed>> claim(
            String queueName, String worker, int max, Want want, long waitMs, Future<Void> gone) {
        return onContext(() -> {
            if (stopping) {
                // Another node may serve it: the worker moves on instead of polling a draining one.
                return Future.failedFuture(new ShuttingDownException());
            }
            registry.saw(want.tenant(), worker, queueName);
            return claims.claim(queues.get(queueName), worker, max, want, waitMs, gone)
                    .compose(this::withParents)
                    .compose(this::withSteps)
                    .map(this::withinBytes);
        });
    }

    /**
     * The claimed tasks that fit in http.maxClaimBytes, in order (the first whatever it weighs); the
     * rest, heavier than their payloads showed once parents and steps were read, are handed back at
     * once: pending again, the attempt not counted, for the next claim.
     */
    private List<Claimed> withinBytes(List<Claimed> claimed) {
        long used = 0;
        int fit = 0;
        for (; fit < claimed.size(); fit++) {
            long weight = claimed.get(fit).weight();
            if (fit > 0 && used + weight > claimBounds.maxClaimBytes()) {
                break;
            }
            used += weight;
        }
        if (fit == claimed.size()) {
            return claimed;
        }
        handBack(new ArrayList<>(claimed.subList(fit, claimed.size())));
        return new ArrayList<>(claimed.subList(0, fit));
    }

    /**
     * The claimed flow tasks with what their parents ended with, read from the journal: inline up to
     * flows.maxParentBytes, else how many and how much, for the worker to read in pages.
     */
    private Future<List<Claimed>> withParents(List<Claimed> claimed) {
        boolean any = false;
        for (Claimed c : claimed) {
            any |= c.task().hasParents();
        }
        if (!any) {
            return Future.succeededFuture(claimed);
        }
        List<Future<Claimed>> read = new ArrayList<>(claimed.size());
        for (Claimed c : claimed) {
            read.add(
                    !c.task().hasParents()
                            ? Future.succeededFuture(c)
                            : parts.flows
                                    .parents(c.task().id(), parts.bounds.maxParentBytes())
                                    .map(c::withParents));
        }
        return Future.all(read).map(all -> {
            List<Claimed> answer = new ArrayList<>(claimed.size());
            read.forEach(f -> answer.add(f.result()));
            return answer;
        });
    }

    /**
     * The claimed tasks that ran or slept before with the steps they did, read in one statement for
     * the batch (which also ends the waits that can end: see steps_load). A task whose lease was
     * lost meanwhile is left out of the answer.
     */
    private Future<List<Claimed>> withSteps(List<Claimed> claimed) {
        List<Lease> leases = new ArrayList<>();
        for (Claimed c : claimed) {
            if (c.task().readsSteps(c.lease())) {
                leases.add(c.lease());
            }
        }
        if (leases.isEmpty()) {
            return Future.succeededFuture(claimed);
        }
        return parts.suspensions.steps().load(leases).map(read -> {
            List<Claimed> answer = new ArrayList<>(claimed.size());
            for (Claimed c : claimed) {
                if (!c.task().readsSteps(c.lease())) {
                    answer.add(c);
                } else if (read.containsKey(c.task().id())) {
                    answer.add(c.withSteps(read.get(c.task().id())));
                }
            }
            return answer;
        });
    }

    /**
     * Ends the attempt suspended on {@code wait} (a remote worker's complete with {@code suspend});
     * the state the task is in after it.
     */
    public Future<TaskState> suspend(String token, UUID taskId, Wait wait, String tenant) {
        return onContext(() -> writes.suspend(token, taskId, wait, tenant));
    }

    /** Journals a step of a remote attempt, fenced by its lease; the result kept (the first written). */
    public Future<StepWritten> step(String token, UUID taskId, String name, String resultJson, String tenant) {
        return onContext(() -> writes.step(token, taskId, name, resultJson, tenant));
    }

    /**
     * Extends the lease, writes the progress given (percent null: none) and tells of a cancel
     * request. {@code tenant}: the tenant the writer acts as (null: it sees every tenant); a lease of
     * another tenant's task is refused (403), as in every write below.
     */
    public Future<Beat> heartbeat(
            String token, UUID taskId, Integer percent, String message, String queue, String tenant) {
        return onContext(() -> writes.heartbeat(token, taskId, percent, message, queue, tenant));
    }

    /**
     * Many heartbeats of {@code queue}'s tasks in one pass on this verticle's loop: one hop there and
     * one back for the batch, not two per item. Each item's own outcome, in order.
     */
    public Future<List<Future<Beat>>> heartbeatAll(List<Renewal> items, String queue, String tenant) {
        return onContext(() -> LeaseWrites.each(
                items, r -> writes.heartbeat(r.token(), r.taskId(), r.percent(), r.message(), queue, tenant)));
    }

    /** As {@link #heartbeatAll}, for completions. */
    public Future<List<Future<TaskState>>> completeAll(List<Completion> items, String queue, String tenant) {
        return onContext(() -> LeaseWrites.each(
                items, c -> writes.complete(c.token(), c.taskId(), c.result(), c.spawn(), queue, tenant)));
    }

    /**
     * Ends the attempt succeeded with {@code result}, adding {@code spawn}'s tasks (null: none) to
     * its flow with it; the state the task is in after it.
     */
    public Future<TaskState> complete(
            String token, UUID taskId, JsonObject result, JsonArray spawn, String queue, String tenant) {
        return onContext(() -> writes.complete(token, taskId, result, spawn, queue, tenant));
    }

    /**
     * Ends the attempt failed with {@code error}. With {@code retry} and attempts left the task runs
     * again after {@code retryAfterMs} (null: the queue's backoff); else it fails for good.
     */
    public Future<Ended> fail(
            String token, UUID taskId, String error, boolean retry, Long retryAfterMs, String tenant) {
        return onContext(() -> writes.fail(token, taskId, error, retry, retryAfterMs, tenant));
    }

    /**
     * Puts the attempt's task back to pending without spending the attempt: due {@code snoozeMs} from
     * now (a snooze), or, with null, handed back at once (a worker stopping with work it will not do).
     */
    public Future<Ended> putBack(String token, UUID taskId, Long snoozeMs, String tenant) {
        return onContext(() -> writes.putBack(token, taskId, snoozeMs, tenant));
    }

    /** The remote workers this node has heard from, with the leases they hold through it. */
    public Future<List<Worker>> workers() {
        return onContext(() -> Future.succeededFuture(registry.workers(custody.leasesByWorker())));
    }

    /**
     * One pass over the remote tasks held here. An attempt past its {@code timeoutMs} is ended as a
     * failed one. A task whose lease this node has not seen renewed in time leaves its custody when
     * the journal shows it ended or held by another lease; the others (whose heartbeats go through
     * another node) are given another lease's length. Returns how many tasks left custody.
     */
    public Future<Integer> runOnce() {
        return onContext(() -> {
            long now = clock.millis();
            claims.handBackStale(now);
            return writes.timeOut(custody.timedOut(now))
                    .compose(timedOut -> custody.reconcile().map(released -> timedOut + released));
        });
    }

    /**
     * Gives back leases claimed for a worker that can no longer be told of them (it went away before
     * the answer): pending again at once, the attempt not counted, any node may claim them.
     */
    public Future<Void> handBack(List<Claimed> claimed) {
        return onContext(() -> custody.handBack(claimed));
    }

    /** How many claims wait on the queue now. */
    public Future<Integer> waiting(String queue) {
        return onContext(() -> Future.succeededFuture(claims.waiting(queue)));
    }

    /**
     * How many tasks of the queue the claims waiting here would take now (0 for a queue this node does
     * not serve remotely): what a wake-up from another node may page in for them.
     */
    public Future<Integer> wanted(String queue) {
        if (!serves(queue)) {
            return Future.succeededFuture(0);
        }
        return onContext(() -> Future.succeededFuture(claims.wanted(queue)));
    }

    /** The waiting claims' way back up: hand-backs go through a pass of their own. */
    private final class ClaimsOwner implements WaitingClaims.Owner {

        @Override
        public void handBack(List<Claimed> claimed) {
            RemoteWorkers.this.handBack(claimed);
        }

        @Override
        public boolean stopping() {
            return stopping;
        }
    }

    /** Runs {@code action} on this verticle's event loop; the answer comes back on the caller's. */
    private <T> Future<T> onContext(Supplier<Future<T>> action) {
        Context caller = Vertx.currentContext();
        Promise<T> answer = Promise.promise();
        context.runOnContext(v -> {
            Future<T> result;
            try {
                result = action.get();
            } catch (RuntimeException e) {
                result = Future.failedFuture(e);
            }
            result.onComplete(done -> {
                if (caller == null || caller == context) {
                    answer.handle(done);
                } else {
                    caller.runOnContext(x -> answer.handle(done));
                }
            });
        });
        return answer.future();
    }
}
