package dev.taskline.worker;

import dev.taskline.config.QueueConfig;
import dev.taskline.journal.Journal;
import dev.taskline.model.Heartbeat;
import dev.taskline.model.Lease;
import dev.taskline.model.StepWritten;
import dev.taskline.model.TaskState;
import dev.taskline.model.Wait;
import dev.taskline.model.problem.ForbiddenException;
import dev.taskline.model.problem.InvalidLeaseTokenException;
import dev.taskline.queue.QueueSlots;
import dev.taskline.worker.RemoteWorkers.Beat;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * What a remote worker writes with the lease token it was given: heartbeats (with progress), the
 * attempt's success or failure. The token's signature, task and queue are checked here; the lease
 * itself is fenced by the journal, as a local worker's writes are. On the remote workers' event
 * loop only.
 */
final class LeaseWrites {

    /** Longest progress message kept; the rest is cut. */
    private static final int MAX_MESSAGE = 500;

    private final Map<String, QueueSlots> queues;
    private final Journal journal;
    private final RemoteCustody custody;
    private final WorkerRegistry registry;
    private final Supplier<LeaseTokens> tokens;
    private final AttemptParts parts;
    private final Clock clock;

    LeaseWrites(
            Map<String, QueueSlots> queues,
            RemoteCustody custody,
            WorkerRegistry registry,
            Supplier<LeaseTokens> tokens,
            AttemptParts parts) {
        this.queues = queues;
        this.journal = parts.journal;
        this.custody = custody;
        this.registry = registry;
        this.tokens = tokens;
        this.parts = parts;
        this.clock = parts.clock;
    }

    /**
     * @param queue  the queue the request named, or null when it named none
     * @param tenant the tenant the writer acts as, or null for one that sees every tenant
     */
    Future<Beat> heartbeat(String token, UUID taskId, Integer percent, String message, String queue, String tenant) {
        LeaseTokens.Token t = verify(token, taskId, queue, tenant);
        Lease lease = t.lease();
        long leaseMs = queues.get(t.queue()).config().leaseMs();
        registry.saw(tenant, lease.workerId(), t.queue());
        return journal.heartbeat(lease, Duration.ofMillis(leaseMs)).compose(beat -> {
            if (beat == Heartbeat.LOST) {
                return custody.lost(t);
            }
            custody.renewed(lease, leaseMs);
            if (percent != null) {
                int clamped = Math.max(0, Math.min(100, percent));
                String text = message == null
                        ? null
                        : message.length() > MAX_MESSAGE ? message.substring(0, MAX_MESSAGE) : message;
                parts.progress.progress(taskId, clamped, text);
                journal.progress(lease, clamped, text);
            }
            return Future.succeededFuture(
                    new Beat(clock.instant().plusMillis(leaseMs), beat == Heartbeat.CANCEL_REQUESTED));
        });
    }

    /**
     * Ends the attempt succeeded with {@code result}, adding {@code spawn}'s tasks (null or empty:
     * none) to its flow in the same transaction; the state the task is in after it. A spawn that
     * breaks a rule is refused (422) and changes nothing: the attempt still holds its lease.
     */
    Future<TaskState> complete(
            String token, UUID taskId, JsonObject result, JsonArray spawn, String queue, String tenant) {
        LeaseTokens.Token t = verify(token, taskId, queue, tenant);
        registry.saw(tenant, t.lease().workerId(), t.queue());
        JsonObject value = result == null ? new JsonObject() : result;
        return write(t, new Outcome.Completed(value, spawn))
                .compose(written -> written.state() == null
                        ? custody.lost(t)
                        : Future.succeededFuture(custody.ended(t, written.state(), null)));
    }

    /** Ends the attempt suspended on {@code wait}; the state the task is in after it (409 when the lease was lost). */
    Future<TaskState> suspend(String token, UUID taskId, Wait wait, String tenant) {
        LeaseTokens.Token t = verify(token, taskId, null, tenant);
        registry.saw(tenant, t.lease().workerId(), t.queue());
        return write(t, new Outcome.Suspending(wait)).compose(suspended -> {
            if (suspended.state() == null) {
                return custody.lost(t);
            }
            if (suspended.state() == TaskState.PENDING) {
                custody.suspended(t, suspended.dueNow());
                return Future.succeededFuture(TaskState.PENDING);
            }
            return Future.succeededFuture(custody.ended(t, suspended.state(), null));
        });
    }

    /** Journals a step of the attempt; the result kept. 409 when the lease was lost. */
    Future<StepWritten> step(String token, UUID taskId, String name, String resultJson, String tenant) {
        LeaseTokens.Token t = verify(token, taskId, null, tenant);
        return parts.suspensions
                .steps()
                .step(t.lease(), name, resultJson)
                .compose(kept -> kept != null ? Future.succeededFuture(kept) : custody.lost(t));
    }

    /**
     * Ends the attempt failed with {@code error}. With {@code retry} and attempts left the task runs
     * again after {@code retryAfterMs} (null: the queue's backoff); else it fails for good.
     */
    Future<Ended> fail(String token, UUID taskId, String error, boolean retry, Long retryAfterMs, String tenant) {
        LeaseTokens.Token t = verify(token, taskId, null, tenant);
        registry.saw(tenant, t.lease().workerId(), t.queue());
        JsonObject detail = new JsonObject().put("type", "remote").put("message", error);
        return endFailed(t, new Outcome.Reported(detail, retry, retryAfterMs))
                .compose(ended -> ended == null ? custody.lost(t) : Future.succeededFuture(ended));
    }

    /** As {@link RemoteWorkers#putBack}. A task asked to cancel ends cancelled instead, as on any end. */
    Future<Ended> putBack(String token, UUID taskId, Long snoozeMs, String tenant) {
        LeaseTokens.Token t = verify(token, taskId, null, tenant);
        registry.saw(tenant, t.lease().workerId(), t.queue());
        Instant now = clock.instant();
        End end = decide(t, new Outcome.PutBack(snoozeMs), now);
        Instant due = end instanceof End.Snoozed s ? s.due() : now;
        return parts.ends.write(t.lease(), null, end).compose(written -> {
            TaskState state = written.state();
            return state == null
                    ? custody.lost(t)
                    : Future.succeededFuture(new Ended(
                            custody.putBack(t, state, due, snoozeMs == null), state == TaskState.PENDING ? due : null));
        });
    }

    /**
     * Ends, as a failed attempt (retried while attempts are left), every attempt of {@code held}: a
     * worker that heartbeats forever must not hold a task forever. Its later writes are fenced, the
     * task being no longer running under its lease. Answers how many ended.
     */
    Future<Integer> timeOut(List<RemoteCustody.Held> held) {
        List<Future<Ended>> ends = new ArrayList<>();
        for (RemoteCustody.Held h : held) {
            // As a local attempt that timed out: retried while attempts are left, a cancel not winning.
            ends.add(endFailed(h.token(), new Outcome.TimedOut(RemoteCustody.timeoutMs(h.queue, h.task))));
        }
        return Future.join(ends).otherwiseEmpty().map(v -> (int)
                ends.stream().filter(f -> f.succeeded() && f.result() != null).count());
    }

    /**
     * Ends an attempt failed, or pending again when it is retried (see {@link Endings}); null when
     * the lease was lost.
     */
    private Future<Ended> endFailed(LeaseTokens.Token t, Outcome outcome) {
        End end = decide(t, outcome, clock.instant());
        Instant due = end instanceof End.RetryAt r ? r.due() : null;
        return parts.ends.write(t.lease(), null, end).map(written -> {
            TaskState state = written.state();
            return state == null
                    ? null
                    : new Ended(custody.ended(t, state, due), state == TaskState.PENDING ? due : null);
        });
    }

    /** Decides and writes the end of {@code t}'s attempt. */
    private Future<Written> write(LeaseTokens.Token t, Outcome outcome) {
        return parts.ends.write(t.lease(), null, decide(t, outcome, clock.instant()));
    }

    private End decide(LeaseTokens.Token t, Outcome outcome, Instant now) {
        QueueConfig config = queues.get(t.queue()).config();
        Endings.Attempted attempted = Endings.Attempted.remote(t.lease().attempt(), t.maxAttempts());
        return Endings.decide(attempted, outcome, parts.policy(config), now);
    }

    /**
     * Each of {@code items} written on its own: a write that throws (a token refused) is that item's
     * failure; the answer comes once every write has.
     */
    static <W, T> Future<List<Future<T>>> each(List<W> items, Function<W, Future<T>> write) {
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

    /**
     * @param expected the queue the request named, or null when it named none
     * @param tenant   the tenant the writer acts as; a lease of another tenant's task is not its to write
     */
    private LeaseTokens.Token verify(String token, UUID taskId, String expected, String tenant) {
        LeaseTokens.Token t = tokens.get().verify(token);
        if (tenant != null && !tenant.equals(t.tenant())) {
            // Signed, so a token of this journal; but taken for another tenant's task, by another key.
            throw new ForbiddenException("this lease is another tenant's");
        }
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
}
