package dev.taskline.worker;

import dev.taskline.journal.JournalReads;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.Lease;
import dev.taskline.model.LeaseState;
import dev.taskline.model.Parents;
import dev.taskline.model.Task;
import dev.taskline.model.TaskState;
import dev.taskline.model.problem.LeaseLostException;
import dev.taskline.queue.QueueSlots;
import dev.taskline.worker.RemoteWorkers.Claimed;
import io.vertx.core.Future;
import java.time.Clock;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Supplier;

/**
 * The remote tasks this node leased out, held in its custody (its queue counts them running) until
 * the lease's end is written through it, or {@link #reconcile} finds in the journal that the task
 * ended or moved on elsewhere (a write through another node, a lapsed lease taken over). On the
 * remote workers' event loop only.
 */
final class RemoteCustody {

    private final EndWriter ends;
    private final JournalReads reads;
    private final TasklineMetrics metrics;
    private final Clock clock;
    private final Supplier<LeaseTokens> tokens;
    /** Told of a queue one of whose slots was freed: a waiting claim may take it. */
    private final Consumer<QueueSlots> freed;

    private final Map<UUID, Held> held = new HashMap<>();

    RemoteCustody(
            EndWriter ends,
            JournalReads reads,
            TasklineMetrics metrics,
            Clock clock,
            Supplier<LeaseTokens> tokens,
            Consumer<QueueSlots> freed) {
        this.ends = ends;
        this.reads = reads;
        this.metrics = metrics;
        this.clock = clock;
        this.tokens = tokens;
        this.freed = freed;
    }

    /** A task leased to a remote worker, as this node keeps it. */
    static final class Held {
        final QueueSlots queue;
        final Task task;
        final Lease lease;
        /** When the attempt must be over, heartbeats or not: its timeoutMs from the claim. */
        final long timeoutAtMillis;

        long deadlineMillis;
        boolean timingOut;

        Held(QueueSlots queue, Task task, Lease lease, long deadlineMillis, long timeoutAtMillis) {
            this.queue = queue;
            this.task = task;
            this.lease = lease;
            this.deadlineMillis = deadlineMillis;
            this.timeoutAtMillis = timeoutAtMillis;
        }

        /** The token its worker was given, as the writes check them. */
        LeaseTokens.Token token() {
            return new LeaseTokens.Token(lease, queue.name(), task.maxAttempts(), task.tenant());
        }
    }

    /** Takes a task this node leased to a remote worker into custody; the claim that names it. */
    Claimed hold(QueueSlots queue, Task task, Lease lease) {
        long now = clock.millis();
        long leaseMs = queue.config().leaseMs();
        metrics.queue(queue.name()).started(now - task.dueAtMillis());
        if (task.hasParents() && task.attempt() == 0) {
            metrics.queue(queue.name()).fannedIn(now - task.dueAtMillis());
        }
        Claimed claimed = new Claimed(
                task,
                lease,
                tokens.get().sign(lease, queue.name(), task.maxAttempts(), task.tenant()),
                clock.instant().plusMillis(leaseMs),
                Parents.NONE,
                null);
        held.put(task.id(), new Held(queue, task, lease, now + leaseMs, now + timeoutMs(queue, task)));
        return claimed;
    }

    static long timeoutMs(QueueSlots queue, Task task) {
        return task.timeoutMs() == null ? queue.config().timeoutMs() : task.timeoutMs();
    }

    boolean holds(UUID id) {
        return held.containsKey(id);
    }

    /** The lease {@code lease} was renewed through this node for {@code leaseMs} more. */
    void renewed(Lease lease, long leaseMs) {
        Held h = held.get(lease.taskId());
        if (h != null && h.lease.version() == lease.version()) {
            h.deadlineMillis = clock.millis() + leaseMs;
        }
    }

    /**
     * The one way out of this node's custody for a remote task: done, or held for its retry. A slot
     * freed may be what a waiting claim waits for.
     */
    void release(QueueSlots queue, UUID id, Task again) {
        if (again != null) {
            queue.reschedule(again);
        } else {
            queue.done(id);
        }
        freed.accept(queue);
    }

    /** A write named a lease the journal says is gone: counted, let go of, and answered with the task's state. */
    <T> Future<T> lost(LeaseTokens.Token t) {
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
    TaskState ended(LeaseTokens.Token t, TaskState state, Instant retryAt) {
        QueueMeters meters = metrics.queue(t.queue());
        switch (state) {
            case SUCCEEDED -> meters.succeeded();
            case FAILED -> meters.failed();
            case CANCELLED -> meters.cancelled();
            case PENDING -> meters.retried();
            default -> {}
        }
        leave(
                t,
                state == TaskState.PENDING && retryAt != null
                        ? h -> h.task.pendingAgain(
                                t.lease().version(), t.lease().attempt(), retryAt.toEpochMilli())
                        : h -> null);
        return state;
    }

    /**
     * The journal put the attempt's task back to pending without counting the attempt (a snooze, or
     * a hand-back that also bumped the version): due at {@code due}, it waits here to be claimed
     * again. Any other state is an end as {@link #ended} takes it (a cancel asked meanwhile).
     */
    TaskState putBack(LeaseTokens.Token t, TaskState state, Instant due, boolean handedBack) {
        if (state != TaskState.PENDING) {
            return ended(t, state, null);
        }
        long version = t.lease().version() + (handedBack ? 1 : 0);
        leave(
                t,
                h -> h.task.pendingAgain(version, t.lease().attempt() - 1, due.toEpochMilli())
                        .withoutDeadline());
        return state;
    }

    /**
     * The journal ended the attempt suspended: the task leaves this node's custody, or, due again
     * at once (what it waits for was there), waits here to be claimed again.
     */
    void suspended(LeaseTokens.Token t, boolean dueNow) {
        leave(
                t,
                dueNow
                        ? h -> h.task.pendingAgain(
                                        t.lease().version(), t.lease().attempt() - 1, clock.millis())
                                .withoutDeadline()
                                .asDurable()
                        : h -> null);
    }

    /** The attempt of {@code t} left: out of custody here, and held again as {@code again} makes it (null: not). */
    private void leave(LeaseTokens.Token t, java.util.function.Function<Held, Task> again) {
        UUID id = t.lease().taskId();
        Held h = held.get(id);
        if (h != null && h.lease.version() == t.lease().version()) {
            held.remove(id);
            release(h.queue, id, again.apply(h));
        }
    }

    /** The attempts held past their {@code timeoutMs} at {@code nowMillis}, each handed out once to be ended. */
    List<Held> timedOut(long nowMillis) {
        List<Held> due = new ArrayList<>();
        for (Held h : new ArrayList<>(held.values())) {
            if (h.timeoutAtMillis <= nowMillis && !h.timingOut) {
                h.timingOut = true;
                due.add(h);
            }
        }
        return due;
    }

    /** Lets go of remote tasks whose lease was not seen renewed in time and that ended or moved on elsewhere. */
    Future<Integer> reconcile() {
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
                    h.deadlineMillis = now + h.queue.config().leaseMs();
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
    Future<Void> handBack(List<Claimed> claimed) {
        List<Future<Written>> writes = new ArrayList<>();
        for (Claimed c : claimed) {
            Held h = held.remove(c.task().id());
            if (h == null || h.lease.version() != c.lease().version()) {
                if (h != null) {
                    held.put(c.task().id(), h);
                }
                continue;
            }
            writes.add(ends.write(c.lease(), null, Endings.unstarted(false))
                    .onComplete(done -> release(h.queue, c.task().id(), null)));
        }
        return Future.join(writes).mapEmpty();
    }

    /** How many leases each worker holds through this node. */
    Map<String, Integer> leasesByWorker() {
        Map<String, Integer> leases = new HashMap<>();
        held.values().forEach(h -> leases.merge(h.lease.workerId(), 1, Integer::sum));
        return leases;
    }
}
