package dev.taskline.worker;

import dev.taskline.config.QueueConfig;
import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalReads;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.Heartbeat;
import dev.taskline.model.Lease;
import dev.taskline.model.LeaseState;
import dev.taskline.model.Task;
import dev.taskline.model.TaskState;
import dev.taskline.model.problem.InvalidLeaseTokenException;
import dev.taskline.model.problem.LeaseLostException;
import dev.taskline.model.problem.ShuttingDownException;
import dev.taskline.model.problem.TooManyClaimsException;
import dev.taskline.queue.TaskQueue;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.function.DoubleSupplier;
import java.util.function.Supplier;

/**
 * Runs the remote queues of this node: their tasks are claimed by workers in other processes over
 * HTTP, which then heartbeat, complete or fail them with the lease token they were given. A claim
 * that finds nothing waits (a timer and a promise: no thread, no connection) and is handed the
 * next task that becomes available, at once. The queue's slots still bound how many of its tasks
 * are leased through this node at once, and every write is fenced by the journal as a local
 * worker's is.
 *
 * <p>The node that hands out a lease keeps the task in its custody (its queue counts it running)
 * until the lease's end is written through it, or {@link #runOnce} finds in the journal that the
 * task ended or moved on elsewhere (a write through another node, a lapsed lease taken over). All
 * state lives on this verticle's event loop; the public methods may be called from any.
 */
public final class RemoteWorkers extends VerticleBase {

    public static final String SECRET = "lease-token";
    /** Claims that may wait at once on one queue of a node; past it, 429. */
    public static final int MAX_WAITING = 20_000;

    private final Map<String, TaskQueue> queues;
    private final Journal journal;
    private final JournalReads reads;
    private final TasklineMetrics metrics;
    private final Clock clock;
    private final DoubleSupplier jitter;
    private final ProgressListener progress;
    private final long reconcileMs;
    private final Map<String, Deque<Waiter>> waiters = new HashMap<>();
    /**
     * Per queue, the waiting claims that take only some tasks (some types, one tenant's): served
     * first, for they can take less.
     */
    private final Map<String, Deque<Waiter>> picky = new HashMap<>();
    /**
     * Per queue, tasks an admission journaled already claimed for a waiting claim (as a local
     * queue's idle worker gets them), not yet handed to a worker: the next claims take them first.
     */
    private final Map<String, Deque<Claimed>> prepared = new HashMap<>();

    private final Map<String, AtomicBoolean> wakeScheduled = new HashMap<>();
    private final Map<UUID, Held> held = new HashMap<>();
    private GatedClaims gatedClaims;
    /** The queues a {@link #serve} pass is walking now, and those to walk once more when it ends. */
    private final Set<String> serving = new HashSet<>();

    private final Set<String> serveAgain = new HashSet<>();
    private final Map<String, Seen> seen = new LinkedHashMap<>();
    private LeaseTokens tokens;
    private long reconcileTimer = -1;
    private boolean reconciling;
    private boolean stopping;

    public RemoteWorkers(
            Collection<TaskQueue> remoteQueues,
            Journal journal,
            JournalReads reads,
            TasklineMetrics metrics,
            Clock clock,
            DoubleSupplier jitter,
            ProgressListener progress,
            long reconcileMs) {
        this.queues = new LinkedHashMap<>();
        remoteQueues.forEach(q -> this.queues.put(q.name(), q));
        this.journal = journal;
        this.reads = reads;
        this.metrics = metrics;
        this.clock = clock;
        this.jitter = jitter;
        this.progress = progress;
        this.reconcileMs = reconcileMs;
    }

    /** A task handed to a remote worker, with its lease and the token that names it. */
    public record Claimed(Task task, Lease lease, String token, Instant expiresAt) {}

    /** What a heartbeat learned: the lease's new end, and whether someone asked to cancel the task. */
    public record Beat(Instant expiresAt, boolean cancelRequested) {}

    /** What became of a failed attempt: pending again at {@code retryAt}, or ended (failed, cancelled). */
    public record Outcome(TaskState state, Instant retryAt) {}

    /** A remote worker this node has heard from. */
    public record Worker(String name, String queue, int leases, Instant lastSeen) {}

    @Override
    public Future<?> start() {
        gatedClaims = new GatedClaims(vertx, journal, clock);
        for (TaskQueue queue : queues.values()) {
            waiters.put(queue.name(), new ArrayDeque<>());
            picky.put(queue.name(), new ArrayDeque<>());
            prepared.put(queue.name(), new ArrayDeque<>());
            wakeScheduled.put(queue.name(), new AtomicBoolean());
            queue.onAvailable(() -> wake(queue));
        }
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
        answerWaiters();
        return Future.succeededFuture();
    }

    /** Waiting claims are answered with nothing, and no new claim waits. */
    public Future<Void> drain() {
        return onContext(() -> {
            stopping = true;
            answerWaiters();
            handBackPrepared();
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
            TaskQueue queue = queues.get(queueName);
            saw(worker, queueName);
            absorbDispatched(queue);
            // A paused queue hands out nothing, not even what admissions journaled claimed just before.
            List<Claimed> ready = queue.paused() ? List.of() : takePrepared(queue, max, want);
            List<Task> tasks = take(queue, max - ready.size(), want);
            if (!ready.isEmpty() || waitMs <= 0) {
                return claimAll(queue, tasks, worker)
                        // The journal did not answer for the rest: the prepared leases still go to the worker.
                        .recover(e -> ready.isEmpty() ? Future.failedFuture(e) : Future.succeededFuture(List.of()))
                        .map(claimed -> {
                            List<Claimed> all = new ArrayList<>(ready);
                            all.addAll(claimed);
                            return all;
                        });
            }
            if (tasks.isEmpty()
                    && waiters.get(queueName).size() + picky.get(queueName).size() >= MAX_WAITING) {
                return Future.failedFuture(new TooManyClaimsException(queueName, MAX_WAITING));
            }
            Deque<Waiter> line = (want.any() ? waiters : picky).get(queueName);
            Waiter waiter =
                    new Waiter(worker, max, want, line, System.nanoTime() + waitMs * 1_000_000, Promise.promise());
            gone.onComplete(v -> context.runOnContext(x -> {
                // The client went away while it waited: its claim must not take tasks for nobody.
                waiter.gone = true;
                if (line.remove(waiter)) {
                    vertx.cancelTimer(waiter.timer);
                    waiter.promise.tryComplete(List.of());
                    dispatchTo(queue);
                }
            }));
            if (tasks.isEmpty()) {
                line.add(waiter);
                wait(queue, waiter);
            } else {
                handOver(queue, waiter, tasks);
            }
            return waiter.promise.future();
        });
    }

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
    public record Completion(UUID taskId, String token, JsonObject result) {}

    /** One item of a batch of heartbeats (percent null: no progress). */
    public record Renewal(UUID taskId, String token, Integer percent, String message) {}

    /** Extends the lease, writes the progress given (percent null: none) and tells of a cancel request. */
    public Future<Beat> heartbeat(String token, UUID taskId, Integer percent, String message, String queue) {
        return onContext(() -> heartbeatHere(token, taskId, percent, message, queue));
    }

    /**
     * Many heartbeats of {@code queue}'s tasks in one pass on this verticle's loop: one hop there and
     * one back for the batch, not two per item. Each item's own outcome, in order.
     */
    public Future<List<Future<Beat>>> heartbeatAll(List<Renewal> items, String queue) {
        return onContext(() -> each(items, r -> heartbeatHere(r.token(), r.taskId(), r.percent(), r.message(), queue)));
    }

    /** As {@link #heartbeatAll}, for completions. */
    public Future<List<Future<TaskState>>> completeAll(List<Completion> items, String queue) {
        return onContext(() -> each(items, c -> completeHere(c.token(), c.taskId(), c.result(), queue)));
    }

    private static <W, T> Future<List<Future<T>>> each(List<W> items, java.util.function.Function<W, Future<T>> write) {
        List<Future<T>> futures = new ArrayList<>(items.size());
        for (W item : items) {
            Future<T> one;
            try {
                one = write.apply(item);
            } catch (RuntimeException e) {
                one = Future.failedFuture(e);
            }
            futures.add(one);
        }
        return Future.join(futures).otherwiseEmpty().map(v -> futures);
    }

    private Future<Beat> heartbeatHere(String token, UUID taskId, Integer percent, String message, String queue) {
        LeaseTokens.Token t = verify(token, taskId, queue);
        Lease lease = t.lease();
        long leaseMs = leaseMs(t.queue());
        saw(lease.workerId(), t.queue());
        return journal.heartbeat(lease, java.time.Duration.ofMillis(leaseMs)).compose(beat -> {
            if (beat == Heartbeat.LOST) {
                return lost(t);
            }
            Held h = held.get(taskId);
            if (h != null && h.lease.version() == lease.version()) {
                h.deadlineMillis = clock.millis() + leaseMs;
            }
            if (percent != null) {
                int clamped = Math.max(0, Math.min(100, percent));
                String text = message == null ? null : message.length() > 500 ? message.substring(0, 500) : message;
                progress.progress(taskId, clamped, text);
                journal.progress(lease, clamped, text);
            }
            return Future.succeededFuture(
                    new Beat(clock.instant().plusMillis(leaseMs), beat == Heartbeat.CANCEL_REQUESTED));
        });
    }

    /** Ends the attempt succeeded with {@code result}; the state the task is in after it. */
    public Future<TaskState> complete(String token, UUID taskId, JsonObject result, String queue) {
        return onContext(() -> completeHere(token, taskId, result, queue));
    }

    private Future<TaskState> completeHere(String token, UUID taskId, JsonObject result, String queue) {
        LeaseTokens.Token t = verify(token, taskId, queue);
        saw(t.lease().workerId(), t.queue());
        return journal.succeedOrCancelled(t.lease(), result == null ? new JsonObject() : result)
                .compose(state -> state == null ? lost(t) : Future.succeededFuture(ended(t, state, null)));
    }

    /**
     * Ends the attempt failed with {@code error}. With {@code retry} and attempts left the task runs
     * again after {@code retryAfterMs} (null: the queue's backoff); else it fails for good.
     */
    public Future<Outcome> fail(String token, UUID taskId, String error, boolean retry, Long retryAfterMs) {
        return onContext(() -> {
            LeaseTokens.Token t = verify(token, taskId, null);
            saw(t.lease().workerId(), t.queue());
            JsonObject detail = new JsonObject().put("type", "remote").put("message", error);
            return endFailed(t, detail, retry, retryAfterMs, true)
                    .compose(outcome -> outcome == null ? lost(t) : Future.succeededFuture(outcome));
        });
    }

    /**
     * Ends an attempt failed: pending again after {@code retryAfterMs} (null: the queue's backoff)
     * while {@code retry} is asked and attempts are left, else failed for good, or cancelled when
     * {@code cancelWins} and someone asked. Null when the lease was lost.
     */
    private Future<Outcome> endFailed(
            LeaseTokens.Token t, JsonObject error, boolean retry, Long retryAfterMs, boolean cancelWins) {
        Lease lease = t.lease();
        if (retry && lease.attempt() < t.maxAttempts()) {
            QueueConfig config = queues.get(t.queue()).config();
            long delay = retryAfterMs != null
                    ? retryAfterMs
                    : Backoff.delayMs(
                            lease.attempt(), config.backoffBaseMs(), config.backoffCapMs(), jitter.getAsDouble());
            Instant due = clock.instant().plusMillis(delay);
            return journal.retryAt(lease, due, error)
                    .map(state -> state == null
                            ? null
                            : new Outcome(ended(t, state, due), state == TaskState.PENDING ? due : null));
        }
        Future<TaskState> end =
                cancelWins ? journal.failOrCancelled(lease, error, !retry) : journal.fail(lease, error, !retry);
        return end.map(state -> state == null ? null : new Outcome(ended(t, state, null), null));
    }

    /** The remote workers this node has heard from, with the leases they hold through it. */
    public Future<List<Worker>> workers() {
        return onContext(() -> {
            Map<String, Integer> leases = new HashMap<>();
            held.values().forEach(h -> leases.merge(h.lease.workerId(), 1, Integer::sum));
            List<Worker> list = new ArrayList<>();
            seen.values()
                    .forEach(s -> list.add(new Worker(s.name, s.queue, leases.getOrDefault(s.name, 0), s.lastSeen)));
            return Future.succeededFuture(list);
        });
    }

    /**
     * One pass over the remote tasks held here. An attempt past its {@code timeoutMs} is ended as a
     * failed one. A task whose lease this node has not seen renewed in time leaves its custody when
     * the journal shows it ended or held by another lease; the others (whose heartbeats go through
     * another node) are given another lease's length. Returns how many tasks left custody.
     */
    public Future<Integer> runOnce() {
        return onContext(() -> {
            handBackStalePrepared();
            return timeOut().compose(timedOut -> reconcile().map(released -> timedOut + released));
        });
    }

    /**
     * Tasks journaled claimed for a claim that went away before they came, and taken by no claim
     * since: given back while half their lease is left, so that no attempt lapses unrun.
     */
    private void handBackStalePrepared() {
        long now = clock.millis();
        for (TaskQueue queue : queues.values()) {
            absorbDispatched(queue);
            List<Claimed> stale = new ArrayList<>();
            prepared.get(queue.name()).removeIf(c -> {
                boolean old =
                        c.expiresAt().toEpochMilli() - now < queue.config().leaseMs() / 2;
                if (old) {
                    stale.add(c);
                }
                return old;
            });
            if (!stale.isEmpty()) {
                handBack(stale);
            }
        }
    }

    /**
     * Ends, as a failed attempt (retried while attempts are left), every remote attempt held here
     * past its {@code timeoutMs}: a worker that heartbeats forever must not hold a task forever. Its
     * later writes are fenced, the task being no longer running under its lease.
     */
    private Future<Integer> timeOut() {
        long now = clock.millis();
        List<Future<Outcome>> ends = new ArrayList<>();
        for (Held h : new ArrayList<>(held.values())) {
            if (h.timeoutAtMillis > now || h.timingOut) {
                continue;
            }
            h.timingOut = true;
            JsonObject error = new JsonObject()
                    .put("type", "timeout")
                    .put("message", "the attempt ran longer than " + timeoutMs(h.queue, h.task) + " ms");
            // As a local attempt that timed out: retried while attempts are left, a cancel not winning.
            ends.add(endFailed(
                    new LeaseTokens.Token(h.lease, h.queue.name(), h.task.maxAttempts()), error, true, null, false));
        }
        return Future.join(ends).otherwiseEmpty().map(v -> (int)
                ends.stream().filter(f -> f.succeeded() && f.result() != null).count());
    }

    /** Lets go of remote tasks whose lease was not seen renewed in time and that ended or moved on elsewhere. */
    private Future<Integer> reconcile() {
        long now = clock.millis();
        List<UUID> due = new ArrayList<>();
        Map<UUID, Held> looked = new HashMap<>();
        held.forEach((id, h) -> {
            if (h.deadlineMillis <= now) {
                due.add(id);
                looked.put(id, h);
            }
        });
        if (due.isEmpty()) {
            return Future.succeededFuture(0);
        }
        return reads.leaseStates(due).map(states -> {
            Map<UUID, LeaseState> byId = new HashMap<>();
            states.forEach(s -> byId.put(s.id(), s));
            int released = 0;
            for (UUID id : due) {
                Held h = held.get(id);
                LeaseState state = byId.get(id);
                if (h == null) {
                    continue;
                }
                if (h != looked.get(id)) {
                    continue; // ended and claimed again while the journal was read: this is another lease
                }
                if (state != null
                        && state.state() == TaskState.RUNNING
                        && state.leaseVersion() == h.lease.version()
                        && h.lease.workerId().equals(state.workerId())) {
                    h.deadlineMillis = now + leaseMs(h.queue.name());
                } else {
                    held.remove(id);
                    release(h.queue, id, null);
                    released++;
                }
            }
            return released;
        });
    }

    /**
     * Gives back leases claimed for a worker that can no longer be told of them (it went away before
     * the answer): pending again at once, the attempt not counted, any node may claim them.
     */
    public Future<Void> handBack(List<Claimed> claimed) {
        return onContext(() -> {
            List<Future<TaskState>> writes = new ArrayList<>();
            for (Claimed c : claimed) {
                Held h = held.remove(c.task().id());
                if (h == null || h.lease.version() != c.lease().version()) {
                    if (h != null) {
                        held.put(c.task().id(), h);
                    }
                    continue;
                }
                writes.add(journal.handBackUnstarted(c.lease())
                        .onComplete(done -> release(h.queue, c.task().id(), null)));
            }
            return Future.join(writes).mapEmpty();
        });
    }

    /** How many claims wait on the queue now. */
    public Future<Integer> waiting(String queue) {
        return onContext(() -> Future.succeededFuture(
                waiters.get(queue).size() + picky.get(queue).size()));
    }

    /** How many remote tasks this node holds in custody. */
    public int held() {
        return held.size();
    }

    // ---- inside, on this verticle's event loop ------------------------------------------------

    /** @param expected the queue the request named, or null when it named none */
    private LeaseTokens.Token verify(String token, UUID taskId, String expected) {
        LeaseTokens.Token t = tokens.verify(token);
        if (expected != null && !expected.equals(t.queue())) {
            throw new InvalidLeaseTokenException(
                    "lease is a token of queue '" + t.queue() + "', not '" + expected + "'");
        }
        if (!t.lease().taskId().equals(taskId)) {
            throw new InvalidLeaseTokenException("lease is another task's token");
        }
        if (!queues.containsKey(t.queue())) {
            throw new InvalidLeaseTokenException("lease names a queue this node does not run remotely");
        }
        return t;
    }

    private <T> Future<T> lost(LeaseTokens.Token t) {
        metrics.queue(t.queue()).fenced();
        UUID id = t.lease().taskId();
        Held h = held.get(id);
        if (h != null && h.lease.version() == t.lease().version()) {
            held.remove(id);
            release(h.queue, id, null);
        }
        return reads.state(id).compose(state -> Future.failedFuture(new LeaseLostException(id, state)));
    }

    /** The journal wrote the attempt's end: the task leaves this node's custody, or waits here for its retry. */
    private TaskState ended(LeaseTokens.Token t, TaskState state, Instant retryAt) {
        QueueMeters meters = metrics.queue(t.queue());
        switch (state) {
            case SUCCEEDED -> meters.succeeded();
            case FAILED -> meters.failed();
            case CANCELLED -> meters.cancelled();
            case PENDING -> meters.retried();
            default -> {}
        }
        UUID id = t.lease().taskId();
        Held h = held.get(id);
        if (h != null && h.lease.version() == t.lease().version()) {
            held.remove(id);
            release(
                    h.queue,
                    id,
                    state == TaskState.PENDING && retryAt != null
                            ? h.task.pendingAgain(t.lease().version(), t.lease().attempt(), retryAt.toEpochMilli())
                            : null);
        }
        return state;
    }

    private List<Task> take(TaskQueue queue, int max, Want want) {
        if (!want.any()) {
            return max <= 0 ? List.of() : queue.poll(max, want::takes);
        }
        List<Task> tasks = new ArrayList<>();
        while (tasks.size() < max) {
            // The queue keeps the slot count: it hands out a task only while one is free.
            Task task = queue.poll();
            if (task == null) {
                break;
            }
            tasks.add(task);
        }
        return tasks;
    }

    private Future<List<Claimed>> claimAll(TaskQueue queue, List<Task> tasks, String worker) {
        if (tasks.isEmpty()) {
            return Future.succeededFuture(List.of());
        }
        QueueMeters meters = metrics.queue(queue.name());
        long leaseMs = queue.config().leaseMs();
        List<Future<Claimed>> claims = new ArrayList<>(tasks.size());
        for (Task task : tasks) {
            java.time.Duration leaseFor = java.time.Duration.ofMillis(leaseMs);
            claims.add(gatedClaims
                    .claim(queue, task, worker, leaseFor, TaskQueue.Stage.RUNNING, meters)
                    .map(answer -> {
                        if (answer.held()) {
                            // A gate (its key's bound, its rate budget) refused it: the task waits in the queue for its
                            // room.
                            return null;
                        }
                        Lease lease = answer.lease();
                        if (lease == null) {
                            // Cancelled, finished or claimed by another node since it was queued.
                            meters.claimLost();
                            release(queue, task.id(), null);
                            return null;
                        }
                        return hold(queue, task, lease);
                    })
                    .recover(e -> {
                        if (!held.containsKey(task.id())) {
                            release(queue, task.id(), null);
                        }
                        return Future.failedFuture(e);
                    }));
        }
        return Future.join(claims).otherwiseEmpty().compose(all -> {
            List<Claimed> claimed = new ArrayList<>(tasks.size());
            Throwable failure = null;
            for (Future<Claimed> claim : claims) {
                if (claim.failed()) {
                    failure = claim.cause();
                } else if (claim.result() != null) {
                    claimed.add(claim.result());
                }
            }
            // Some claims failed (the journal did not answer): those that landed still go to the worker.
            return claimed.isEmpty() && failure != null
                    ? Future.failedFuture(failure)
                    : Future.succeededFuture(claimed);
        });
    }

    /** Takes a task this node leased to a remote worker into custody; the claim that names it. */
    private Claimed hold(TaskQueue queue, Task task, Lease lease) {
        long now = clock.millis();
        long leaseMs = queue.config().leaseMs();
        metrics.queue(queue.name()).started(now - task.dueAtMillis());
        Claimed claimed = new Claimed(
                task,
                lease,
                tokens.sign(lease, queue.name(), task.maxAttempts()),
                clock.instant().plusMillis(leaseMs));
        held.put(task.id(), new Held(queue, task, lease, now + leaseMs, now + timeoutMs(queue, task)));
        return claimed;
    }

    private static long timeoutMs(TaskQueue queue, Task task) {
        return task.timeoutMs() == null ? queue.config().timeoutMs() : task.timeoutMs();
    }

    /** Safe from any thread; many wake-ups before the pass runs cost one hop. */
    private void wake(TaskQueue queue) {
        AtomicBoolean scheduled = wakeScheduled.get(queue.name());
        if (scheduled.compareAndSet(false, true)) {
            context.runOnContext(v -> {
                scheduled.set(false);
                serve(queue);
            });
        }
    }

    /**
     * Hands newly available tasks to the claims that wait for them, oldest claim first; those that
     * take only some tasks first, as the others can take whatever is left.
     */
    private void serve(TaskQueue queue) {
        // A journal that refuses at once (busy) ends claims inside a pass, and their release serves
        // again: that pass runs after this one, not inside its walk of the line.
        if (!serving.add(queue.name())) {
            serveAgain.add(queue.name());
            return;
        }
        try {
            do {
                serveAgain.remove(queue.name());
                servePass(queue);
            } while (serveAgain.contains(queue.name()));
        } finally {
            serving.remove(queue.name());
        }
    }

    private void servePass(TaskQueue queue) {
        absorbDispatched(queue);
        if (queue.paused()) {
            // Claims wait out a pause (the queue hands out nothing). Tasks journaled claimed for a waiting
            // claim just before it are handed back rather than answered.
            List<Claimed> left = takePrepared(queue, Integer.MAX_VALUE, Want.ANY);
            if (!left.isEmpty()) {
                handBack(left);
            }
            return;
        }
        // Claims that want the same often wait together: the queue is searched once for each.
        Set<Want> foundNothing = new HashSet<>();
        for (Iterator<Waiter> line = picky.get(queue.name()).iterator();
                line.hasNext()
                        && (queue.canPoll() || !prepared.get(queue.name()).isEmpty()); ) {
            Waiter waiter = line.next();
            // A claim that finds nothing it takes leaves the next one its chance.
            if (foundNothing.contains(waiter.want)) {
                continue;
            }
            if (answer(queue, waiter)) {
                line.remove();
            } else {
                foundNothing.add(waiter.want);
            }
        }
        Deque<Waiter> line = waiters.get(queue.name());
        while (!line.isEmpty() && answer(queue, line.peek())) {
            line.poll();
        }
        dispatchTo(queue);
    }

    /** Answers a waiting claim with what it can take now; false when there is nothing for it. */
    private boolean answer(TaskQueue queue, Waiter waiter) {
        List<Claimed> ready = takePrepared(queue, waiter.max, waiter.want);
        if (!ready.isEmpty()) {
            vertx.cancelTimer(waiter.timer);
            if (!waiter.promise.tryComplete(ready)) {
                handBack(ready);
            }
            return true;
        }
        List<Task> tasks = take(queue, waiter.max, waiter.want);
        if (tasks.isEmpty()) {
            return false;
        }
        vertx.cancelTimer(waiter.timer);
        handOver(queue, waiter, tasks);
        return true;
    }

    /** Claims {@code tasks} for a claim that may wait; it answers with those that landed. */
    private void handOver(TaskQueue queue, Waiter waiter, List<Task> tasks) {
        claimAll(queue, tasks, waiter.worker)
                .map(claimed -> {
                    if (!claimed.isEmpty() && queue.paused()) {
                        // Paused while these claims were in flight: nothing starts, they go back to pending.
                        handBack(claimed);
                        return List.<Claimed>of();
                    }
                    return claimed;
                })
                .onComplete(done -> {
                    long left = (waiter.deadlineNanos - System.nanoTime()) / 1_000_000;
                    if (done.succeeded() && done.result().isEmpty() && left > 0 && !waiter.gone && !stopping) {
                        // Every task it was handed had been cancelled or taken elsewhere: it waits on, in front.
                        waiter.line.addFirst(waiter);
                        wait(queue, waiter);
                        serve(queue);
                        return;
                    }
                    boolean taken = done.succeeded()
                            ? waiter.promise.tryComplete(done.result())
                            : waiter.promise.tryFail(done.cause());
                    if (!taken && done.succeeded()) {
                        handBack(done.result());
                    }
                });
    }

    /** Lets a claim in line wait until its time is up; the queue serves it when there is work. */
    private void wait(TaskQueue queue, Waiter waiter) {
        long left = Math.max(1, (waiter.deadlineNanos - System.nanoTime()) / 1_000_000);
        waiter.timer = vertx.setTimer(left, id -> {
            waiter.line.remove(waiter);
            waiter.promise.tryComplete(List.of());
            dispatchTo(queue);
        });
        dispatchTo(queue);
    }

    /**
     * While a claim waits, admissions may journal new tasks already claimed for it (one statement
     * instead of an insert and a claim), as they do for a local queue's idle worker; the queue still
     * checks that nothing waits and that slots are free. Only a claim that takes any type is served
     * so: one that takes only some tasks is answered from the queue when they come.
     */
    private void dispatchTo(TaskQueue queue) {
        Waiter head = waiters.get(queue.name()).peek();
        queue.servedBy(
                head == null ? null : head.worker,
                head == null ? null : java.time.Duration.ofMillis(queue.config().leaseMs()));
    }

    /** Takes into custody the tasks admissions journaled claimed for this queue's waiting claims. */
    private void absorbDispatched(TaskQueue queue) {
        TaskQueue.Dispatched d;
        while ((d = queue.pollDispatched()) != null) {
            prepared.get(queue.name()).add(hold(queue, d.task(), d.lease()));
        }
    }

    private List<Claimed> takePrepared(TaskQueue queue, int max, Want want) {
        Deque<Claimed> ready = prepared.get(queue.name());
        List<Claimed> taken = new ArrayList<>();
        for (Iterator<Claimed> it = ready.iterator(); taken.size() < max && it.hasNext(); ) {
            Claimed c = it.next();
            if (want.takes(c.task())) {
                it.remove();
                taken.add(c);
            }
        }
        return taken;
    }

    /**
     * The one way out of this node's custody for a remote task: done, or held for its retry. A slot
     * freed may be what a waiting claim waits for.
     */
    private void release(TaskQueue queue, UUID id, Task again) {
        if (again != null) {
            queue.reschedule(again);
        } else {
            queue.done(id);
        }
        serve(queue);
    }

    private void handBackPrepared() {
        for (TaskQueue queue : queues.values()) {
            queue.servedBy(null, null);
            absorbDispatched(queue);
            List<Claimed> left = takePrepared(queue, Integer.MAX_VALUE, Want.ANY);
            if (!left.isEmpty()) {
                handBack(left);
            }
        }
    }

    private void answerWaiters() {
        List<Deque<Waiter>> lines = new ArrayList<>(waiters.values());
        lines.addAll(picky.values());
        for (Deque<Waiter> line : lines) {
            for (Waiter waiter : line) {
                vertx.cancelTimer(waiter.timer);
                waiter.promise.tryComplete(List.of());
            }
            line.clear();
        }
    }

    private long leaseMs(String queue) {
        return queues.get(queue).config().leaseMs();
    }

    private void saw(String worker, String queue) {
        seen.remove(worker);
        seen.put(worker, new Seen(worker, queue, clock.instant()));
        if (seen.size() > 10_000) {
            // Names are the workers' own: keep the most recent, not every name ever used.
            seen.remove(seen.keySet().iterator().next());
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

    private static final class Waiter {
        final String worker;
        final int max;
        final Want want;
        final Deque<Waiter> line;
        /** When it is answered with nothing, on {@link System#nanoTime}'s scale as the timers are. */
        final long deadlineNanos;

        final Promise<List<Claimed>> promise;
        long timer;
        boolean gone;

        Waiter(
                String worker,
                int max,
                Want want,
                Deque<Waiter> line,
                long deadlineNanos,
                Promise<List<Claimed>> promise) {
            this.worker = worker;
            this.max = max;
            this.want = want;
            this.line = line;
            this.deadlineNanos = deadlineNanos;
            this.promise = promise;
        }
    }

    private static final class Held {
        final TaskQueue queue;
        final Task task;
        final Lease lease;
        /** When the attempt must be over, heartbeats or not: its timeoutMs from the claim. */
        final long timeoutAtMillis;

        long deadlineMillis;
        boolean timingOut;

        Held(TaskQueue queue, Task task, Lease lease, long deadlineMillis, long timeoutAtMillis) {
            this.queue = queue;
            this.task = task;
            this.lease = lease;
            this.deadlineMillis = deadlineMillis;
            this.timeoutAtMillis = timeoutAtMillis;
        }
    }

    private record Seen(String name, String queue, Instant lastSeen) {}
}
