package dev.taskline.worker;

import dev.taskline.handler.HandlerRegistry;
import dev.taskline.handler.PermanentTaskException;
import dev.taskline.handler.PushHandler;
import dev.taskline.handler.TaskHandler;
import dev.taskline.journal.Journal;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.model.BusAddresses;
import dev.taskline.model.Heartbeat;
import dev.taskline.model.Lease;
import dev.taskline.model.Parents;
import dev.taskline.model.ParentsPage;
import dev.taskline.model.Task;
import dev.taskline.model.TaskState;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.JournalUnavailableException;
import dev.taskline.queue.QueueSlots;
import dev.taskline.queue.QueueSlots.Dispatched;
import dev.taskline.queue.QueueSlots.Stage;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.core.eventbus.MessageConsumer;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicBoolean;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs one queue's tasks on this node, never more than the queue's slots at once. It owns its
 * running attempts on its own event loop; the queue wakes it when work arrives, so nothing polls.
 * When an attempt ends it decides what the journal records: success, failure, a retry after
 * backoff, a snooze, a cancellation.
 *
 * <p>Two journal round trips per task would bound a slot to one task per two commits, so neither
 * is waited for in the slot: a slot is free when its handler returns (the end is journaled behind
 * it, the task counted finishing until it commits), and the worker keeps a few tasks claimed ahead
 * (leased, heart-beaten, started as slots free) so that a freed slot does not wait for a claim. How
 * many it claims ahead follows the handlers' run time: as many as would start within {@link
 * #AHEAD_HORIZON_NANOS}, so that short tasks never wait on a claim and long ones are not hoarded
 * from other nodes.
 */
public final class WorkerVerticle extends VerticleBase {

    private static final Logger LOG = Logger.getLogger(WorkerVerticle.class.getName());
    /** Tasks claimed ahead are those the slots would start within this time, at the handlers' pace. */
    static final long AHEAD_HORIZON_NANOS = 50_000_000;

    private final QueueSlots queue;
    private final AttemptParts parts;
    private final Journal journal;
    private final Endings.Policy policy;
    private final HandlerRegistry handlers;
    private final QueueMeters meters;
    private final Clock clock;
    private final String workerId;
    private final long progressIntervalMs;
    private final Duration leaseFor;
    private final int slots;
    private final AtomicBoolean wakeScheduled = new AtomicBoolean();
    private final Map<UUID, Attempt> attempts = new HashMap<>();
    /** Tasks leased to this worker whose handlers have not started, in the order they start. */
    private final LinkedHashMap<UUID, Dispatched> ready = new LinkedHashMap<>();
    /** Tasks whose end is being journaled, with when it was handed over: see {@link #heartbeat}. */
    private final Map<UUID, Finishing> finishing = new HashMap<>();
    /** Tasks whose claim is in flight, and those of them asked to cancel meanwhile. */
    private final Set<UUID> claiming = new HashSet<>();

    private final Set<UUID> cancelledWhileClaiming = new HashSet<>();
    private GatedClaims gatedClaims;
    private final RunTime runTime = new RunTime();
    private MessageConsumer<JsonArray> cancels;
    /** The queue's push target, when it has one: it runs every task of the queue, whatever its type. */
    private PushHandler push;

    private long heartbeatTimer = -1;
    /** Handlers running: never more than the slots. */
    private int handlersRunning;
    /** Tasks this worker took from the queue and has not yet given back (any stage). */
    private int inCustody;

    private boolean stopping;
    private Promise<Void> idle;
    /** Between start and stop: the queue's signals are heard. */
    private volatile boolean listening;

    public WorkerVerticle(
            QueueSlots queue,
            HandlerRegistry handlers,
            QueueMeters meters,
            String nodeId,
            long progressIntervalMs,
            AttemptParts parts) {
        this.queue = queue;
        this.parts = parts;
        this.journal = parts.journal;
        this.policy = parts.policy(queue.config());
        this.handlers = handlers;
        this.meters = meters;
        this.clock = parts.clock;
        // The name under which this node's worker of the queue holds leases.
        this.workerId = nodeId + "/" + queue.name();
        this.progressIntervalMs = progressIntervalMs;
        this.leaseFor = Duration.ofMillis(queue.config().leaseMs());
        this.slots = queue.config().slots();
    }

    @Override
    public Future<?> start() {
        gatedClaims = new GatedClaims(vertx, journal, clock);
        cancels = vertx.eventBus().consumer(BusAddresses.CANCEL, message -> {
            // A task dispatched at admission may not be in ready yet.
            takeDispatched();
            for (Object id : message.body()) {
                UUID taskId = UUID.fromString((String) id);
                if (claiming.contains(taskId)) {
                    cancelledWhileClaiming.add(taskId);
                }
                Attempt attempt = attempts.get(taskId);
                if (attempt != null) {
                    attempt.requestCancel();
                }
                Dispatched waiting = ready.remove(taskId);
                if (waiting != null) {
                    cancelBeforeStart(waiting);
                }
            }
        });
        if (queue.config().push() != null) {
            push = PushHandler.open(vertx, queue.config().push(), slots, clock, parts.bounds.maxResultBytes());
        }
        heartbeatTimer = vertx.setPeriodic(queue.config().heartbeatMs(), id -> heartbeat());
        queue.claimAhead(0);
        listening = true;
        queue.servedBy(workerId, leaseFor);
        wake();
        return cancels.completion();
    }

    @Override
    public Future<?> stop() {
        stopping = true;
        queue.servedBy(null, null);
        listening = false;
        vertx.cancelTimer(heartbeatTimer);
        if (push != null) {
            push.close();
        }
        return cancels.unregister();
    }

    /**
     * Takes no new tasks, gives running ones {@code grace} to end, then hands the rest back to the
     * journal (pending, version bumped) so that any node can take them at once. Tasks claimed ahead
     * and not started are handed back at once.
     */
    public Future<Void> drain(Duration grace) {
        Promise<Void> done = Promise.promise();
        context.runOnContext(v -> {
            stopping = true;
            queue.servedBy(null, null);
            queue.claimAhead(0);
            // Still woken: an admission that took a slot before the line above may commit after it.
            releaseReady();
            if (inCustody == 0) {
                done.complete();
                return;
            }
            idle = done;
            vertx.setTimer(Math.max(1, grace.toMillis()), id -> {
                for (Attempt attempt : new ArrayList<>(attempts.values())) {
                    attempt.release();
                }
            });
        });
        return done.future();
    }

    /**
     * Tasks leased here that will not start now (dispatched at admission, claimed ahead) are
     * journaled as running: hand them back at once rather than leave them to a lapsing lease.
     */
    private void releaseReady() {
        for (Dispatched task : takeReady()) {
            releaseBeforeStart(task);
        }
    }

    /** Every task leased here and not started, taken out of the worker's hands. */
    private List<Dispatched> takeReady() {
        takeDispatched();
        List<Dispatched> left = new ArrayList<>(ready.values());
        ready.clear();
        return left;
    }

    private void takeDispatched() {
        Dispatched dispatched;
        while ((dispatched = queue.pollDispatched()) != null) {
            inCustody++;
            ready.put(dispatched.task().id(), dispatched);
        }
    }

    /** The queue's signal, from any thread: tasks came into line, or it was paused or resumed. */
    public void available() {
        if (listening) {
            wake();
        }
    }

    /** Safe from any thread; many wake-ups before the drain runs cost one hop. */
    private void wake() {
        if (wakeScheduled.compareAndSet(false, true)) {
            context.runOnContext(v -> {
                wakeScheduled.set(false);
                drain();
            });
        }
    }

    /** Starts what the free slots can take, then claims what the slots will want next. */
    private void drain() {
        if (stopping) {
            releaseReady();
            return;
        }
        if (queue.paused()) {
            // Nothing starts in a paused queue: what is leased here goes back to pending, and waits in
            // line here for the resume. (The queue hands out nothing new meanwhile.)
            for (Dispatched task : takeReady()) {
                holdBack(task);
            }
            return;
        }
        takeDispatched();
        while (handlersRunning < slots && !ready.isEmpty()) {
            Iterator<Dispatched> first = ready.values().iterator();
            Dispatched next = first.next();
            first.remove();
            start(next.task(), next.lease());
        }
        queue.claimAhead(runTime.ahead(slots, queue.config().claimAhead()));
        // The queue keeps the count: it hands out tasks only while the slots and the claims ahead allow.
        for (Task task : queue.pollAhead(Integer.MAX_VALUE)) {
            inCustody++;
            claim(task);
        }
    }

    private void claim(Task task) {
        claiming.add(task.id());
        gatedClaims
                .claim(queue, task, workerId, leaseFor, Stage.CLAIMED, meters)
                .onComplete(done -> {
                    if (done.succeeded() && done.result().held()) {
                        // A gate (its key's bound, its rate budget) refused it: still in the queue's custody, it
                        // waits there for the gate's room.
                        claiming.remove(task.id());
                        cancelledWhileClaiming.remove(task.id());
                        outOfHands();
                        return;
                    }
                    claimed(task, done.failed() ? null : done.result().lease(), done.cause());
                });
    }

    /** The journal answered a claim: {@code lease} null when the task was taken or ended meanwhile. */
    private void claimed(Task task, Lease lease, Throwable failure) {
        claiming.remove(task.id());
        boolean cancelAsked = cancelledWhileClaiming.remove(task.id());
        if (failure instanceof JournalUnavailableException) {
            LOG.warning("task " + task.id() + " could not be claimed: " + failure.getMessage());
            // Held here until the hand-back is settled: a task in this queue's custody is not paged in
            // again, so no later claim of this worker can take the very lease the hand-back aims at.
            handBackInDoubt(task).onComplete(settled -> given(task, Stage.CLAIMED, null));
        } else if (failure != null) {
            LOG.log(Level.WARNING, "task " + task.id() + " could not be claimed", failure);
            given(task, Stage.CLAIMED, null);
        } else if (lease == null) {
            // Cancelled, finished or claimed by another node since it was queued: nothing to do.
            meters.claimLost();
            given(task, Stage.CLAIMED, null);
        } else if (stopping) {
            releaseBeforeStart(new Dispatched(task, lease));
        } else if (cancelAsked) {
            cancelBeforeStart(new Dispatched(task, lease));
        } else {
            ready.put(task.id(), new Dispatched(task, lease));
        }
        // A group's claims answer together: one pass starts them all.
        wake();
    }

    /**
     * A claim whose connection was lost may have committed before its answer came: its task would then
     * be held by a lease nobody uses until the lease lapsed, and its next claim would count a second
     * attempt. So the lease it would have made (the next version, this worker's) is handed back as
     * unstarted once the journal answers, within the lease's time: fenced, and so nothing, where the
     * claim did not commit; another node's claim since holds another worker's lease, and fences it
     * too. The task, pending either way, is paged in again by the recovery pass.
     */
    private Future<Written> handBackInDoubt(Task task) {
        Lease wouldBe = new Lease(task.id(), workerId, task.leaseVersion() + 1, task.attempt() + 1);
        return UntilBack.write(
                        vertx,
                        () -> parts.ends.write(wouldBe, task, Endings.unstarted(false)),
                        queue.config().leaseMs())
                .onSuccess(written -> {
                    if (written != Written.FENCED) {
                        LOG.info("task " + task.id() + " was claimed before the journal went; handed back");
                    }
                });
    }

    /** A task leased here and not started goes back to pending for any node to take. */
    private void releaseBeforeStart(Dispatched task) {
        leave(
                task.task(),
                Stage.CLAIMED,
                parts.ends.write(task.lease(), null, Endings.unstarted(false)).map(written -> (Task) null));
    }

    /**
     * A task leased here and not started, in a queue that was paused: pending again in the journal
     * (its attempt given back, its version bumped), and held here again for when the queue resumes.
     */
    private void holdBack(Dispatched task) {
        Lease lease = task.lease();
        leave(
                task.task(),
                Stage.CLAIMED,
                parts.ends.write(lease, null, Endings.unstarted(false)).map(written -> {
                    if (written.state() != TaskState.PENDING) {
                        counted(
                                written.state(),
                                false); // a cancel asked for meanwhile ended it; null: the lease was lost
                        return null;
                    }
                    return task.task()
                            .pendingAgain(
                                    lease.version() + 1,
                                    lease.attempt() - 1,
                                    task.task().dueAtMillis());
                }));
    }

    /** A task leased here and not started was asked to cancel: it ends cancelled without running. */
    private void cancelBeforeStart(Dispatched task) {
        leave(
                task.task(),
                Stage.CLAIMED,
                parts.ends.write(task.lease(), null, Endings.unstarted(true)).map(written -> ended(written.state())));
    }

    /** The task leaves this worker at {@code stage} once {@code write} is journaled. */
    private void leave(Task task, Stage stage, Future<Task> write) {
        write.onComplete(done -> {
            if (done.failed()) {
                LOG.log(Level.WARNING, "task " + task.id() + " could not be recorded", done.cause());
            }
            given(task, stage, done.succeeded() ? done.result() : null);
        });
    }

    /** Out of this worker's custody: done here, or held for its next try when {@code again} is set. */
    private void given(Task task, Stage stage, Task again) {
        if (stage == Stage.FINISHING) {
            finishing.remove(task.id());
        }
        if (again != null && !stopping) {
            // Back to pending with a due time: hold it here until then (or leave it to the journal).
            queue.reschedule(again, stage);
        } else {
            queue.done(task.id(), stage);
        }
        outOfHands();
    }

    /** A task left this worker's hands (its queue may still hold it): a drain may be over, a slot free. */
    private void outOfHands() {
        inCustody--;
        if (inCustody == 0 && idle != null) {
            idle.tryComplete();
        }
        wake();
    }

    /** Renews every lease this worker holds, running, claimed ahead or finishing, in one grouped pass. */
    private void heartbeat() {
        // An end still not committed a heartbeat period after it was handed over waits on a journal
        // that fell behind: keep its lease alive, or it would be fenced and its task run again. Younger
        // ends are left alone; a heartbeat that lost the race to its end would count as fenced.
        long stuckSince =
                System.nanoTime() - TimeUnit.MILLISECONDS.toNanos(queue.config().heartbeatMs());
        for (Finishing end : finishing.values()) {
            if (end.since() < stuckSince) {
                journal.heartbeat(end.lease(), leaseFor);
            }
        }
        for (Attempt attempt : attempts.values()) {
            journal.heartbeat(attempt.lease(), leaseFor).onSuccess(attempt::heartbeat);
        }
        for (Dispatched task : ready.values()) {
            journal.heartbeat(task.lease(), leaseFor).onSuccess(beat -> {
                if (beat == Heartbeat.HELD || ready.get(task.task().id()) != task) {
                    return;
                }
                ready.remove(task.task().id());
                if (beat == Heartbeat.LOST) {
                    meters.fenced();
                    given(task.task(), Stage.CLAIMED, null);
                } else {
                    cancelBeforeStart(task);
                }
            });
        }
    }

    /**
     * Runs a task whose lease this worker holds, and times it: the wait from when it was due (for a
     * task dispatched at admission, its submit-to-start time) and the attempt itself. The slot is
     * free again when the attempt's outcome is known; its end is journaled behind it.
     */
    private void start(Task task, Lease lease) {
        queue.started();
        handlersRunning++;
        meters.started(clock.millis() - task.dueAtMillis());
        long startedAt = System.nanoTime();
        Instant began = clock.instant();
        Attempt attempt = run(task, lease);
        attempt.outcome().onComplete(outcome -> {
            long ran = System.nanoTime() - startedAt;
            meters.ran(ran);
            if (outcome.result() instanceof Outcome.Succeeded || outcome.result() instanceof Outcome.Failed) {
                // The handlers' pace: a timeout or a release says nothing of it and would stop claims ahead for long.
                runTime.add(ran);
                // The same pace on the node's clock, which deadlines are read on too.
                meters.paced(Duration.between(began, clock.instant()));
            }
            attempt.end();
            attempts.remove(task.id());
            handlersRunning--;
            queue.returned();
            finishing.put(task.id(), new Finishing(lease, System.nanoTime()));
            Future<Task> end;
            try {
                end = record(attempt, outcome.result());
            } catch (RuntimeException e) {
                // An error whose message cannot be read, say: the task must still be given back, not
                // left finishing for good.
                end = Future.failedFuture(e);
            }
            leave(task, Stage.FINISHING, end);
        });
    }

    private Attempt run(Task task, Lease lease) {
        long timeoutMs = task.timeoutMs() == null ? queue.config().timeoutMs() : task.timeoutMs();
        DurableSteps durable = new DurableSteps(parts.suspensions, lease, clock, parts.bounds.maxResultBytes());
        Attempt attempt = new Attempt(context, parts, task, lease, timeoutMs, progressIntervalMs, durable);
        attempts.put(task.id(), attempt);
        TaskHandler handler = push != null ? push : handlers.get(task.type());
        attempt.handlerDone(
                handler == null
                        ? Future.failedFuture(new PermanentTaskException(
                                "no handler for task type '" + task.type() + "' on this node"))
                        : !attempt.payloadReadable()
                                ? Future.failedFuture(
                                        new PermanentTaskException("the payload in the journal is not a JSON object"))
                                // A task that ran or slept before reads its steps first: whether it
                                // compensates must be known before its handler asks.
                                : (task.readsSteps(lease) ? durable.load() : Future.<Void>succeededFuture())
                                        .compose(v -> !task.hasParents()
                                                ? invoke(handler, attempt)
                                                : readParents(task).compose(read -> {
                                                    attempt.parents(
                                                            read,
                                                            (after, limit) -> parts.flows
                                                                    .parentsPage(
                                                                            task.id(),
                                                                            after,
                                                                            limit,
                                                                            parts.bounds.maxParentBytes())
                                                                    .map(ParentsPage::jsonOf));
                                                    if (task.attempt() == 0) {
                                                        // Due when its parents let it run: the fan-in, to the handler's
                                                        // start.
                                                        meters.fannedIn(clock.millis() - task.dueAtMillis());
                                                    }
                                                    return invoke(handler, attempt);
                                                })));
        return attempt;
    }

    /**
     * Decides the attempt's end ({@link Endings}) and writes it. The journal down, the write is tried
     * again while the lease could be held ({@link UntilBack}); after that, or with a lost lease (no
     * failure: a null state), the task is left as it is: the lease's end hands it on.
     */
    private Future<Task> record(Attempt attempt, Outcome outcome) {
        Task task = attempt.task();
        Lease lease = attempt.lease();
        Instant now = clock.instant();
        Endings.Attempted attempted = new Endings.Attempted(
                lease.attempt(),
                task.maxAttempts(),
                attempt.cancelRequested(),
                attempt.durable().suspend(),
                attempt.spawned());
        End end = Endings.decide(attempted, outcome, policy, now);
        Future<Task> written = write(attempt, end, now);
        if (end instanceof End.Released) {
            written.onFailure(e -> LOG.log(
                    Level.WARNING,
                    "could not release task " + task.id() + "; it stays leased until "
                            + queue.config().leaseMs() + " ms after its last heartbeat",
                    e));
        }
        if (end instanceof End.Succeeded s && s.spawns()) {
            written = written.recover(e -> {
                End instead = Endings.spawnRefused(attempted, e, policy, now);
                return instead == null ? Future.failedFuture(e) : write(attempt, instead, now);
            });
        }
        return written.recover(e -> {
            String refusal = Journal.refusal(e);
            if (refusal == null) {
                return Future.failedFuture(e);
            }
            LOG.log(Level.WARNING, "the end of task " + task.id() + " was refused; it ends failed", e);
            return write(attempt, Endings.refused(refusal), now);
        });
    }

    private Future<Task> write(Attempt attempt, End end, Instant now) {
        // Its lease is kept alive meanwhile (finishing), once the journal is back.
        return UntilBack.write(
                        vertx,
                        () -> parts.ends.write(attempt.lease(), attempt.task(), end),
                        queue.config().leaseMs())
                .map(written -> afterwards(attempt, end, written, now));
    }

    /** Counts what became of the task, and gives back the task to hold here when it is due again. */
    private Task afterwards(Attempt attempt, End end, Written written, Instant now) {
        Task task = attempt.task();
        Lease lease = attempt.lease();
        TaskState state = written.state();
        if (end instanceof End.RetryAt r) {
            return requeued(
                    state,
                    task.pendingAgain(lease.version(), lease.attempt(), r.due().toEpochMilli()));
        }
        if (end instanceof End.Snoozed s) {
            return requeued(
                    state,
                    task.pendingAgain(
                                    lease.version(),
                                    lease.attempt() - 1,
                                    s.due().toEpochMilli())
                            .withoutDeadline());
        }
        if (end instanceof End.Suspended) {
            counted(state, false);
            return written.dueNow() && state == TaskState.PENDING
                    ? task.pendingAgain(lease.version(), lease.attempt() - 1, now.toEpochMilli())
                            .withoutDeadline()
                            .asDurable()
                    : null;
        }
        return ended(state);
    }

    /** An attempt ended for good (or fenced: null), counted; nothing to hold again. */
    private Task ended(TaskState state) {
        counted(state, false);
        return null;
    }

    private Task requeued(TaskState state, Task again) {
        counted(state, true);
        return state == TaskState.PENDING ? again : null;
    }

    /** Counts what the journal says became of the task; null means our write was fenced. */
    private void counted(TaskState state, boolean retry) {
        if (state == null) {
            meters.fenced();
            return;
        }
        switch (state) {
            case SUCCEEDED -> meters.succeeded();
            case FAILED -> meters.failed();
            case CANCELLED -> meters.cancelled();
            case PENDING -> {
                if (retry) {
                    meters.retried();
                }
            }
            default -> {}
        }
    }

    /** What a flow task's parents ended with: inline, or past flows.maxParentBytes a reference to page through. */
    private Future<Parents> readParents(Task task) {
        return parts.flows
                .parentsAtStart(task.id(), task.leaseVersion(), parts.bounds.maxParentBytes())
                .recover(e -> Future.failedFuture(
                        e instanceof InvalidTaskException ? new PermanentTaskException(e.getMessage()) : e));
    }

    private Future<JsonObject> invoke(TaskHandler handler, Attempt attempt) {
        try {
            if (handler.blocking()) {
                return vertx.executeBlocking(() -> handler.run(attempt), false).compose(inner -> inner);
            }
            Future<JsonObject> result = handler.run(attempt);
            return result == null
                    ? Future.failedFuture(new IllegalStateException("handler returned no future"))
                    : result;
        } catch (Throwable e) {
            return Future.failedFuture(e);
        }
    }

    /** A task whose end is being journaled, and since when (monotonic nanoseconds). */
    private record Finishing(Lease lease, long since) {}

    /**
     * The handlers' recent run time (an exponentially weighted mean), and from it how many tasks to
     * claim ahead. None until a handler has returned: a node does not hoard before it knows.
     */
    static final class RunTime {
        private double meanNanos = -1;

        void add(long nanos) {
            meanNanos = meanNanos < 0 ? nanos : meanNanos + (nanos - meanNanos) / 16;
        }

        int ahead(int slots, int most) {
            if (meanNanos < 0) {
                return 0;
            }
            double perHorizon = slots * (AHEAD_HORIZON_NANOS / Math.max(1.0, meanNanos));
            return (int) Math.min(most, Math.floor(perHorizon));
        }
    }
}
