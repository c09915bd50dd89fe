package dev.taskline.service;

import static dev.taskline.service.Permits.permitted;

import dev.taskline.admission.Admission;
import dev.taskline.config.QueueConfig;
import dev.taskline.model.TaskState;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.NotFoundException;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueReadings;
import dev.taskline.worker.Ended;
import dev.taskline.worker.LeaseTokens;
import dev.taskline.worker.RemoteWorkers;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;

/**
 * Remote work: the claims of workers in other processes, and their writes with the lease tokens
 * they were given. A caller works a queue when its key may; the token is the proof that it may
 * write for the task, having been handed only to a claim that could see it.
 */
public final class WorkService {

    public static final int MAX_CLAIM = 1_000;
    public static final long MAX_WAIT_MS = 60_000;
    /** Types one claim may name: a worker runs a handful, not a catalogue. */
    public static final int MAX_CLAIM_TYPES = 100;

    public static final int MAX_ERROR = 10_000;

    private final NodeQueues<? extends QueueReadings> queues;
    private final RemoteWorkers remote;
    private final java.time.Clock clock;

    public WorkService(NodeQueues<? extends QueueReadings> queues, RemoteWorkers remote, java.time.Clock clock) {
        this.queues = queues;
        this.remote = remote;
        this.clock = clock;
    }

    /**
     * Claims up to {@code max} tasks of a remote queue for {@code worker}, waiting up to {@code
     * waitMs} for one when none is there.
     */
    public Future<List<RemoteWorkers.Claimed>> claim(
            Caller caller, String queue, String worker, int max, Set<String> types, long waitMs, Future<Void> gone) {
        return checkClaim(caller, queue, worker, max, types, waitMs)
                // A tenant's key takes only its tenant's tasks; a key that sees every tenant takes any.
                .compose(v ->
                        remote.claim(queue, worker, max, new RemoteWorkers.Want(types, caller.tenant()), waitMs, gone));
    }

    /** Succeeds when the caller may claim so from the queue: a work call checks it before it writes. */
    public Future<Void> checkClaim(
            Caller caller, String queue, String worker, int max, Set<String> types, long waitMs) {
        Future<Void> remoteQueue = remoteQueue(queue).compose(v -> permitted(() -> caller.requireWork(queue)));
        if (remoteQueue.failed()) {
            return remoteQueue.mapEmpty();
        }
        if (worker == null || !LeaseTokens.WORKER.matcher(worker).matches()) {
            return Future.failedFuture(
                    new InvalidTaskException("worker must be 1 to 128 letters, digits, '.', '_', ':', '@' or '-'"));
        }
        if (max < 1 || max > MAX_CLAIM) {
            return Future.failedFuture(new InvalidTaskException("max must be from 1 to " + MAX_CLAIM));
        }
        if (waitMs < 0 || waitMs > MAX_WAIT_MS) {
            return Future.failedFuture(new InvalidTaskException("waitMs must be from 0 to " + MAX_WAIT_MS));
        }
        if (types != null) {
            if (types.isEmpty() || types.size() > MAX_CLAIM_TYPES) {
                return Future.failedFuture(new InvalidTaskException(
                        "types must hold 1 to " + MAX_CLAIM_TYPES + " task types (leave it out to claim any)"));
            }
            for (String type : types) {
                if (!QueueConfig.EXTERNAL_TYPE.matcher(type).matches()) {
                    return Future.failedFuture(new InvalidTaskException(
                            "types: '" + type + "' must be 1-128 letters, digits, '.', '_', ':' or '-'"));
                }
            }
            QueueConfig config = queues.get(queue).config();
            if (types.stream().noneMatch(config::acceptsExternalType)) {
                // A worker may run more types than one queue takes, but one that runs none would wait forever.
                return Future.failedFuture(new InvalidTaskException("types: queue '" + queue + "' takes none of "
                        + String.join(", ", types) + " (it takes: " + String.join(", ", config.types()) + ")"));
            }
        }
        return Future.succeededFuture();
    }

    /** Gives back leases claimed for a caller that went away before it was answered. */
    public Future<Void> handBack(Caller caller, List<RemoteWorkers.Claimed> claimed) {
        return remote.handBack(claimed);
    }

    /** Renews a remote worker's lease, with its progress (percent null: none). */
    public Future<RemoteWorkers.Beat> heartbeat(Caller caller, UUID id, String lease, Integer percent, String message) {
        return heartbeat(caller, id, lease, percent, message, null);
    }

    private Future<RemoteWorkers.Beat> heartbeat(
            Caller caller, UUID id, String lease, Integer percent, String message, String queue) {
        InvalidTaskException bad = checkPercent(percent);
        return bad != null
                ? Future.failedFuture(bad)
                : mayWrite(caller, lease)
                        .compose(v -> remote.heartbeat(lease, id, percent, message, queue, caller.tenant()));
    }

    private static InvalidTaskException checkPercent(Integer percent) {
        return percent != null && (percent < 0 || percent > 100)
                ? new InvalidTaskException("progress.percent must be from 0 to 100")
                : null;
    }

    /** Ends a remote attempt succeeded. */
    public Future<TaskState> complete(
            Caller caller,
            UUID id,
            String lease,
            io.vertx.core.json.JsonObject result,
            io.vertx.core.json.JsonArray spawn) {
        return permitted(() -> maySpawn(caller, spawn))
                .compose(v -> mayWrite(caller, lease))
                .compose(v -> remote.complete(lease, id, result, spawn, null, caller.tenant()));
    }

    /**
     * Refuses (403) unless the caller may put each task of {@code spawn} (null: none) into its queue
     * (the default queue when it names none; a queue that is no text is refused later, as the spawn
     * is read).
     */
    private static void maySpawn(Caller caller, io.vertx.core.json.JsonArray spawn) {
        if (spawn == null) {
            return;
        }
        java.util.Set<String> queues = new java.util.TreeSet<>();
        for (Object task : spawn) {
            if (task instanceof io.vertx.core.json.JsonObject object) {
                Object queue = object.getValue("queue");
                queues.add(queue instanceof String name ? name : dev.taskline.config.TasklineConfig.DEFAULT_QUEUE);
            }
        }
        queues.forEach(caller::requireSpawn);
    }

    private static RuntimeException spawnRefused(Caller caller, Views.LeaseWrite write) {
        try {
            maySpawn(caller, write.spawn());
            return null;
        } catch (RuntimeException e) {
            return e;
        }
    }

    /**
     * Ends a remote attempt suspended: the task pending again until its wait ends, the attempt not
     * counted; the state it is in after (cancelled when someone had asked).
     */
    public Future<TaskState> suspend(Caller caller, UUID id, String lease, dev.taskline.model.Suspend suspend) {
        if (suspend.afterMs() != null && suspend.afterMs() > Admission.MAX_DELAY_MS) {
            return Future.failedFuture(
                    new InvalidTaskException("a sleep or timeout must be at most " + Admission.MAX_DELAY_MS + " ms"));
        }
        return mayWrite(caller, lease)
                .compose(v -> remote.suspend(lease, id, suspend.at(clock.instant()), caller.tenant()));
    }

    /** Journals a step of a remote attempt: the result kept (the first one written for its name). */
    public Future<dev.taskline.model.StepWritten> step(
            Caller caller, UUID id, String lease, String name, Object result) {
        return permitted(() -> DurableService.checkName("a step's name", name))
                .compose(v -> mayWrite(caller, lease))
                .compose(v -> remote.step(lease, id, name, io.vertx.core.json.Json.encode(result), caller.tenant()));
    }

    /**
     * How a remote worker ends an attempt that did not succeed: failed with {@code error} (retried
     * after {@code retryAfterMs}, or the queue's backoff, while {@code retry} and attempts last; else
     * for good), or put back without spending the attempt: snoozed until {@code snoozeMs} from now,
     * or, with {@code release}, handed back at once for any worker to claim (a worker stopping).
     */
    public record Ending(String lease, String error, boolean retry, Long retryAfterMs, Long snoozeMs, boolean release) {

        boolean putsBack() {
            return release || snoozeMs != null;
        }
    }

    /** Ends a remote attempt as {@code ending} says. */
    public Future<Ended> fail(Caller caller, UUID id, Ending ending) {
        String error = ending.error();
        // An error is optional only for a task put back; one that is given must fit.
        if (error == null ? !ending.putsBack() : error.isEmpty() || error.length() > MAX_ERROR) {
            return Future.failedFuture(
                    new InvalidTaskException("error must be a text of 1 to " + MAX_ERROR + " characters"));
        }
        InvalidTaskException badDelay = delayOutOfRange("retryAfterMs", ending.retryAfterMs());
        badDelay = badDelay != null ? badDelay : delayOutOfRange("snoozeMs", ending.snoozeMs());
        if (badDelay != null) {
            return Future.failedFuture(badDelay);
        }
        return mayWrite(caller, ending.lease())
                .compose(v -> ending.putsBack()
                        ? remote.putBack(
                                ending.lease(), id, ending.release() ? null : ending.snoozeMs(), caller.tenant())
                        : remote.fail(
                                ending.lease(), id, error, ending.retry(), ending.retryAfterMs(), caller.tenant()));
    }

    private static InvalidTaskException delayOutOfRange(String field, Long ms) {
        return ms != null && (ms < 0 || ms > Admission.MAX_DELAY_MS)
                ? new InvalidTaskException(field + " must be from 0 to " + Admission.MAX_DELAY_MS)
                : null;
    }

    /** Completes many remote attempts; each is answered on its own. */
    public Future<List<Views.ItemResult<TaskState>>> completeAll(
            Caller caller, String queue, List<Views.LeaseWrite> writes) {
        return remoteQueue(queue)
                .compose(v -> permitted(() -> caller.requireWork(queue)))
                .compose(v -> each(
                        writes,
                        w -> spawnRefused(caller, w),
                        valid -> remote.completeAll(
                                valid.stream()
                                        .map(w ->
                                                new RemoteWorkers.Completion(w.id(), w.lease(), w.result(), w.spawn()))
                                        .toList(),
                                queue,
                                caller.tenant())));
    }

    /** One item of a batch of failures: as {@link #fail}'s arguments. */
    public record Failure(UUID id, Ending ending) {}

    /** Fails many remote attempts (none: answered at once); each is answered on its own, in order. */
    public Future<List<Views.ItemResult<Ended>>> failAll(Caller caller, String queue, List<Failure> failures) {
        if (failures.isEmpty()) {
            return Future.succeededFuture(List.of());
        }
        if (failures.size() > MAX_CLAIM) {
            return Future.failedFuture(new InvalidTaskException("fail must hold at most " + MAX_CLAIM + " items"));
        }
        return remoteQueue(queue)
                .compose(v -> permitted(() -> caller.requireWork(queue)))
                .compose(v -> {
                    List<Future<Ended>> each = new ArrayList<>(failures.size());
                    for (Failure f : failures) {
                        each.add(fail(caller, f.id(), f.ending()));
                    }
                    return Future.join(each).transform(done -> {
                        List<Views.ItemResult<Ended>> results = new ArrayList<>(failures.size());
                        for (int i = 0; i < failures.size(); i++) {
                            results.add(itemResult(failures.get(i).id(), each.get(i)));
                        }
                        return Future.succeededFuture(results);
                    });
                });
    }

    /** Renews many remote leases; each is answered on its own. */
    public Future<List<Views.ItemResult<RemoteWorkers.Beat>>> heartbeatAll(
            Caller caller, String queue, List<Views.LeaseWrite> writes) {
        return remoteQueue(queue)
                .compose(v -> permitted(() -> caller.requireWork(queue)))
                .compose(v -> each(
                        writes,
                        w -> checkPercent(w.percent()),
                        valid -> remote.heartbeatAll(
                                valid.stream()
                                        .map(w ->
                                                new RemoteWorkers.Renewal(w.id(), w.lease(), w.percent(), w.message()))
                                        .toList(),
                                queue,
                                caller.tenant())));
    }

    /**
     * Whether the caller may write with this lease token: it may work the token's queue. The token
     * names the task's tenant, which the writes check against the caller's (another tenant's lease
     * is 403): it was handed only to a claim that could see the task.
     */
    private Future<Void> mayWrite(Caller caller, String lease) {
        // Only a key limited to some queues needs the token read here (its signature checked twice).
        return permitted(() -> {
            if (caller.queues().isEmpty()) {
                caller.require(Scope.WORK);
            } else {
                caller.requireWork(remote.queueOf(lease));
            }
        });
    }

    /** Succeeds when {@code queue} is one of this node's remote queues. */
    private Future<Void> remoteQueue(String queue) {
        QueueReadings found = queues.get(queue);
        if (found == null) {
            return Future.failedFuture(NotFoundException.queue(queue));
        }
        if (!found.config().remote()) {
            return Future.failedFuture(new InvalidTaskException("queue '" + queue
                    + "' is not remote: its tasks run in the node; configure \"remote\": true for workers over HTTP"));
        }
        return Future.succeededFuture();
    }

    /** The remote workers this node has heard from. */
    public Future<List<RemoteWorkers.Worker>> workers(Caller caller) {
        // Every worker's name and queue, whoever's tasks it runs: an admin's view.
        return permitted(() -> caller.require(Scope.ADMIN)).compose(v -> remote.workers());
    }

    /**
     * A batch of remote writes: items that {@code check} refuses are answered with its problem, the
     * others go to the remote workers in one call; each item is answered on its own, in order.
     */
    private static <T> Future<List<Views.ItemResult<T>>> each(
            List<Views.LeaseWrite> writes,
            java.util.function.Function<Views.LeaseWrite, ? extends RuntimeException> check,
            java.util.function.Function<List<Views.LeaseWrite>, Future<List<Future<T>>>> writeAll) {
        if (writes.isEmpty() || writes.size() > MAX_CLAIM) {
            return Future.failedFuture(new InvalidTaskException("tasks must hold 1 to " + MAX_CLAIM + " items"));
        }
        Throwable[] refused = new Throwable[writes.size()];
        List<Views.LeaseWrite> valid = new ArrayList<>(writes.size());
        for (int i = 0; i < writes.size(); i++) {
            refused[i] = check.apply(writes.get(i));
            if (refused[i] == null) {
                valid.add(writes.get(i));
            }
        }
        Future<List<Future<T>>> written = valid.isEmpty() ? Future.succeededFuture(List.of()) : writeAll.apply(valid);
        return written.map(outcomes -> {
            List<Views.ItemResult<T>> results = new ArrayList<>(writes.size());
            int next = 0;
            for (int i = 0; i < writes.size(); i++) {
                UUID id = writes.get(i).id();
                if (refused[i] != null) {
                    results.add(new Views.ItemResult<>(id, null, refused[i]));
                    continue;
                }
                results.add(itemResult(id, outcomes.get(next++)));
            }
            return results;
        });
    }

    /** An item's answer from the write that ended: what it came to, or why it was refused. */
    private static <T> Views.ItemResult<T> itemResult(UUID id, Future<T> written) {
        return new Views.ItemResult<>(
                id, written.succeeded() ? written.result() : null, written.succeeded() ? null : written.cause());
    }
}
