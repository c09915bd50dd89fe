package dev.taskline.worker;

import dev.taskline.metrics.QueueMeters;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.Lease;
import dev.taskline.model.Task;
import dev.taskline.model.problem.ShareExceededException;
import dev.taskline.model.problem.TooManyClaimsException;
import dev.taskline.queue.QueueSlots;
import dev.taskline.worker.RemoteWorkers.Claimed;
import dev.taskline.worker.RemoteWorkers.Want;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Deque;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.atomic.AtomicBoolean;

/**
 * The claims of remote workers, matched with the tasks of their queues. A claim that finds nothing
 * waits (a timer and a promise: no thread, no connection) and is handed the next task that becomes
 * available, at once; those that take only some tasks (some types, one tenant's) are served first,
 * for they can take less. The queue's slots still bound how many of its tasks are leased through
 * this node at once. On the remote workers' event loop only, but for {@link #wake}.
 */
final class WaitingClaims {

    private final Vertx vertx;
    private final Context context;
    private final Map<String, QueueSlots> queues;
    private final RemoteCustody custody;
    private final GatedClaims gatedClaims;
    private final TasklineMetrics metrics;
    private final Owner owner;
    private final Bounds bounds;
    /** Per queue, the claims of each tenant that wait (or are being handed tasks): what its share bounds. */
    private final Map<String, Map<String, Integer>> byTenant = new HashMap<>();

    private final Map<String, Deque<Waiter>> waiters = new HashMap<>();
    /** Per queue, the waiting claims that take only some tasks: served first, for they can take less. */
    private final Map<String, Deque<Waiter>> picky = new HashMap<>();
    /**
     * Per queue, tasks an admission journaled already claimed for a waiting claim (as a local
     * queue's idle worker gets them), not yet handed to a worker: the next claims take them first.
     */
    private final Map<String, Deque<Claimed>> prepared = new HashMap<>();

    private final Map<String, AtomicBoolean> wakeScheduled = new HashMap<>();
    /** The queues a {@link #serve} pass is walking now, and those to walk once more when it ends. */
    private final Set<String> serving = new HashSet<>();

    private final Set<String> serveAgain = new HashSet<>();

    /** What the claims call back up to: the remote workers that hold them. */
    interface Owner {

        /** Gives back leases no claim will take (deferred to a pass of its own, as any hand-back). */
        void handBack(List<Claimed> claimed);

        /** The node drains: no claim waits any longer. */
        boolean stopping();
    }

    /**
     * @param maxWaiting    claims that may wait at once on one queue; past it, 429
     * @param tenantMost    of those, the claims of one tenant (see {@link
     *                      dev.taskline.config.TasklineConfig.Http#tenantShare}); past it, 429
     * @param maxClaimBytes the most bytes one claim's answer may carry (http.maxClaimBytes): what
     *                      {@link #take} stops at
     */
    record Bounds(int maxWaiting, int tenantMost, long maxClaimBytes) {}

    WaitingClaims(
            Context context,
            Map<String, QueueSlots> queues,
            RemoteCustody custody,
            GatedClaims gatedClaims,
            TasklineMetrics metrics,
            Owner owner,
            Bounds bounds) {
        this.vertx = context.owner();
        this.context = context;
        this.queues = queues;
        this.custody = custody;
        this.gatedClaims = gatedClaims;
        this.metrics = metrics;
        this.owner = owner;
        this.bounds = bounds;
        for (QueueSlots queue : queues.values()) {
            byTenant.put(queue.name(), new HashMap<>());
            waiters.put(queue.name(), new ArrayDeque<>());
            picky.put(queue.name(), new ArrayDeque<>());
            prepared.put(queue.name(), new ArrayDeque<>());
            wakeScheduled.put(queue.name(), new AtomicBoolean());
        }
    }

    /**
     * Claims up to {@code max} tasks of {@code queue} for {@code worker}, only those {@code want}
     * takes; when none is there, waits up to {@code waitMs} for one and answers with it at once,
     * else with none. {@code gone} completes when the client went away.
     */
    Future<List<Claimed>> claim(QueueSlots queue, String worker, int max, Want want, long waitMs, Future<Void> gone) {
        String queueName = queue.name();
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
        if (tasks.isEmpty() && waiting(queueName) >= bounds.maxWaiting()) {
            return Future.failedFuture(new TooManyClaimsException(queueName, bounds.maxWaiting()));
        }
        Map<String, Integer> tenants = byTenant.get(queueName);
        if (want.tenant() != null && tasks.isEmpty() && tenants.getOrDefault(want.tenant(), 0) >= bounds.tenantMost()) {
            return Future.failedFuture(new ShareExceededException(
                    "tenant '" + want.tenant() + "' has " + bounds.tenantMost() + " claims waiting on queue '"
                            + queueName + "' of this node, its most at once",
                    bounds.tenantMost()));
        }
        Deque<Waiter> line = (want.any() ? waiters : picky).get(queueName);
        Waiter waiter = new Waiter(worker, max, want, line, System.nanoTime() + waitMs * 1_000_000, Promise.promise());
        if (want.tenant() != null) {
            // Counted until it is answered, whatever answers it (a task, the time, the client gone).
            tenants.merge(want.tenant(), 1, Integer::sum);
            waiter.promise
                    .future()
                    .onComplete(done -> tenants.computeIfPresent(want.tenant(), (t, n) -> n == 1 ? null : n - 1));
        }
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
    }

    /** How many claims wait on the queue now. */
    int waiting(String queue) {
        return waiters.get(queue).size() + picky.get(queue).size();
    }

    /** How many tasks the claims that wait on the queue would take, all told. */
    int wanted(String queue) {
        long sum = 0;
        for (Waiter waiter : waiters.get(queue)) {
            sum += waiter.max;
        }
        for (Waiter waiter : picky.get(queue)) {
            sum += waiter.max;
        }
        return (int) Math.min(Integer.MAX_VALUE, sum);
    }

    /** Safe from any thread; many wake-ups before the pass runs cost one hop. */
    void wake(QueueSlots queue) {
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
    void serve(QueueSlots queue) {
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

    /** Every waiting claim is answered with nothing. */
    void answerAll() {
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

    /** No more dispatch at admission; the tasks journaled claimed for claims that did not take them go back. */
    void handBackPrepared() {
        for (QueueSlots queue : queues.values()) {
            queue.servedBy(null, null);
            absorbDispatched(queue);
            List<Claimed> left = takePrepared(queue, Integer.MAX_VALUE, Want.ANY);
            if (!left.isEmpty()) {
                owner.handBack(left);
            }
        }
    }

    /**
     * Tasks journaled claimed for a claim that went away before they came, and taken by no claim
     * since: given back while half their lease is left, so that no attempt lapses unrun.
     */
    void handBackStale(long nowMillis) {
        for (QueueSlots queue : queues.values()) {
            absorbDispatched(queue);
            List<Claimed> stale = new ArrayList<>();
            prepared.get(queue.name()).removeIf(c -> {
                boolean old = c.expiresAt().toEpochMilli() - nowMillis
                        < queue.config().leaseMs() / 2;
                if (old) {
                    stale.add(c);
                }
                return old;
            });
            if (!stale.isEmpty()) {
                owner.handBack(stale);
            }
        }
    }

    private void servePass(QueueSlots queue) {
        absorbDispatched(queue);
        if (queue.paused()) {
            // Claims wait out a pause (the queue hands out nothing). Tasks journaled claimed for a waiting
            // claim just before it are handed back rather than answered.
            List<Claimed> left = takePrepared(queue, Integer.MAX_VALUE, Want.ANY);
            if (!left.isEmpty()) {
                owner.handBack(left);
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
    private boolean answer(QueueSlots queue, Waiter waiter) {
        List<Claimed> ready = takePrepared(queue, waiter.max, waiter.want);
        if (!ready.isEmpty()) {
            vertx.cancelTimer(waiter.timer);
            if (!waiter.promise.tryComplete(ready)) {
                owner.handBack(ready);
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
    private void handOver(QueueSlots queue, Waiter waiter, List<Task> tasks) {
        claimAll(queue, tasks, waiter.worker)
                .map(claimed -> {
                    if (!claimed.isEmpty() && queue.paused()) {
                        // Paused while these claims were in flight: nothing starts, they go back to pending.
                        owner.handBack(claimed);
                        return List.<Claimed>of();
                    }
                    return claimed;
                })
                .onComplete(done -> {
                    long left = (waiter.deadlineNanos - System.nanoTime()) / 1_000_000;
                    if (done.succeeded() && done.result().isEmpty() && left > 0 && !waiter.gone && !owner.stopping()) {
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
                        owner.handBack(done.result());
                    }
                });
    }

    /** Lets a claim in line wait until its time is up; the queue serves it when there is work. */
    private void wait(QueueSlots queue, Waiter waiter) {
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
    private void dispatchTo(QueueSlots queue) {
        Waiter head = waiters.get(queue.name()).peek();
        queue.servedBy(
                head == null ? null : head.worker,
                head == null ? null : Duration.ofMillis(queue.config().leaseMs()));
    }

    /** Takes into custody the tasks admissions journaled claimed for this queue's waiting claims. */
    private void absorbDispatched(QueueSlots queue) {
        QueueSlots.Dispatched d;
        while ((d = queue.pollDispatched()) != null) {
            prepared.get(queue.name()).add(custody.hold(queue, d.task(), d.lease()));
        }
    }

    private List<Claimed> takePrepared(QueueSlots queue, int max, Want want) {
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

    private List<Task> take(QueueSlots queue, int max, Want want) {
        if (!want.any()) {
            return max <= 0 ? List.of() : queue.poll(max, want::takes);
        }
        List<Task> tasks = new ArrayList<>();
        long[] used = {0};
        while (tasks.size() < max) {
            // The queue keeps the slot count: it hands out a task only while one is free. A task whose
            // payload would pass the claim's bound stays in line untouched (the best task comes first
            // in every claim, alone if it must, so none waits for ever); what parents and steps add is
            // weighed once read (RemoteWorkers).
            List<Task> next =
                    queue.poll(1, t -> tasks.isEmpty() || used[0] + Claimed.weight(t) <= bounds.maxClaimBytes());
            if (next.isEmpty()) {
                break;
            }
            Task task = next.get(0);
            used[0] += Claimed.weight(task);
            tasks.add(task);
        }
        return tasks;
    }

    private Future<List<Claimed>> claimAll(QueueSlots queue, List<Task> tasks, String worker) {
        if (tasks.isEmpty()) {
            return Future.succeededFuture(List.of());
        }
        QueueMeters meters = metrics.queue(queue.name());
        Duration leaseFor = Duration.ofMillis(queue.config().leaseMs());
        List<Future<Claimed>> claims = new ArrayList<>(tasks.size());
        for (Task task : tasks) {
            claims.add(gatedClaims
                    .claim(queue, task, worker, leaseFor, QueueSlots.Stage.RUNNING, meters)
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
                            custody.release(queue, task.id(), null);
                            return null;
                        }
                        return custody.hold(queue, task, lease);
                    })
                    .recover(e -> {
                        if (!custody.holds(task.id())) {
                            custody.release(queue, task.id(), null);
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
}
