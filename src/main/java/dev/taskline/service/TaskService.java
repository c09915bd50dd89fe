package dev.taskline.service;

import dev.taskline.admission.Admission;
import dev.taskline.admission.Admitted;
import dev.taskline.admission.Submission;
import dev.taskline.auth.ApiKeys;
import dev.taskline.config.AuthConfig;
import dev.taskline.config.ConfigException;
import dev.taskline.config.QueueConfig;
import dev.taskline.control.QueuePauses;
import dev.taskline.control.TaskControl;
import dev.taskline.events.EventHub;
import dev.taskline.events.StreamSink;
import dev.taskline.events.TaskStream;
import dev.taskline.journal.JournalKeys;
import dev.taskline.journal.JournalReads;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.BatchView;
import dev.taskline.model.Cancelled;
import dev.taskline.model.KeyRecord;
import dev.taskline.model.QueueControl;
import dev.taskline.model.StoredKey;
import dev.taskline.model.TaskState;
import dev.taskline.model.TaskView;
import dev.taskline.model.TenantCounts;
import dev.taskline.model.problem.ForbiddenException;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.KeyConflictException;
import dev.taskline.model.problem.NotFoundException;
import dev.taskline.model.problem.TaskStateConflictException;
import dev.taskline.model.problem.TooManyStreamsException;
import dev.taskline.queue.QueueRegistry;
import dev.taskline.queue.TaskQueue;
import dev.taskline.schedule.ScheduleView;
import dev.taskline.schedule.Schedules;
import dev.taskline.service.Views.BatchCancellation;
import dev.taskline.service.Views.Cancellation;
import dev.taskline.service.Views.QueueView;
import dev.taskline.service.Views.Readiness;
import dev.taskline.service.Views.Stats;
import dev.taskline.service.Views.TaskFilter;
import dev.taskline.service.Views.TaskPage;
import dev.taskline.worker.LeaseTokens;
import dev.taskline.worker.RemoteWorkers;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.TimeUnit;
import java.util.function.Supplier;

/**
 * Everything a caller can ask of a node, one method an operation, whatever the way in: the HTTP
 * API, its streams and the dashboard call this and nothing below it. Each takes the {@link Caller},
 * so that the rules on who may do what, and on tenants, are applied here once. It answers with
 * records and fails with typed exceptions ({@link NotFoundException}, {@link
 * TaskStateConflictException}, {@link TooManyStreamsException}, and those of admission and the
 * journal); turning them into a protocol's answers is the caller's business.
 */
public final class TaskService {

    private static final long READY_TIMEOUT_MS = 2_000;
    public static final int MAX_CLAIM = 1_000;
    public static final long MAX_WAIT_MS = 60_000;
    /** Types one claim may name: a worker runs a handful, not a catalogue. */
    public static final int MAX_CLAIM_TYPES = 100;

    public static final int MAX_ERROR = 10_000;

    private final Admission admission;
    private final TaskControl control;
    private final JournalReads reads;
    private final QueueRegistry queues;
    private final TasklineMetrics metrics;
    private final EventHub hub;
    private final RemoteWorkers remote;
    private final ApiKeys keys;
    private final JournalKeys journalKeys;
    private final java.security.SecureRandom random = new java.security.SecureRandom();
    private final Clock clock;
    private final int maxStreams;

    private final QueuePauses pauses;
    private final Schedules schedules;

    public TaskService(
            Admission admission,
            TaskControl control,
            JournalReads reads,
            QueueRegistry queues,
            TasklineMetrics metrics,
            EventHub hub,
            RemoteWorkers remote,
            Clock clock,
            int maxStreams,
            ApiKeys keys,
            JournalKeys journalKeys,
            QueuePauses pauses,
            Schedules schedules) {
        this.pauses = pauses;
        this.schedules = schedules;
        this.keys = keys;
        this.journalKeys = journalKeys;
        this.remote = remote;
        this.admission = admission;
        this.control = control;
        this.reads = reads;
        this.queues = queues;
        this.metrics = metrics;
        this.hub = hub;
        this.clock = clock;
        this.maxStreams = maxStreams;
    }

    // ---- submitting ---------------------------------------------------------------------------

    /** Admits one task; {@code idempotencyKey} and {@code tenant} (the one the caller names) may be null. */
    public Future<Admitted> submit(Caller caller, Submission submission, String idempotencyKey, String tenant) {
        return allowed(() -> {
            caller.require(Scope.SUBMIT);
            return admission.submit(submission, idempotencyKey, caller.tenantFor(tenant));
        });
    }

    /** Admits a batch, all or nothing; as {@link #submit} otherwise. */
    public Future<Admitted> submitBatch(
            Caller caller, List<Submission> submissions, String idempotencyKey, String tenant) {
        return allowed(() -> {
            caller.require(Scope.SUBMIT);
            return admission.submitBatch(submissions, idempotencyKey, caller.tenantFor(tenant));
        });
    }

    // ---- reading ------------------------------------------------------------------------------

    /** The task with its history. */
    public Future<TaskView> task(Caller caller, UUID id) {
        return allowed(() -> {
            caller.require(Scope.READ);
            return reads.task(id).map(task -> visible(caller, task, id));
        });
    }

    /** The batch with its tasks. */
    public Future<BatchView> batch(Caller caller, UUID id) {
        return allowed(() -> {
            caller.require(Scope.READ);
            return visibleBatchView(caller, id);
        });
    }

    private Future<BatchView> visibleBatchView(Caller caller, UUID id) {
        return reads.batch(id).map(batch -> {
            if (batch == null || batch.tasks().stream().anyMatch(task -> !caller.sees(task.tenant()))) {
                throw new NotFoundException("batch", id);
            }
            return batch;
        });
    }

    /** A page of the tasks the caller may see, newest first. */
    public Future<TaskPage> list(Caller caller, TaskFilter filter) {
        // A tenant's key lists only its tenant's tasks: the filter is in the query, so pages stay full.
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> reads.list(
                        filter.state(), filter.queue(), filter.type(), filter.after(), filter.limit(), caller.tenant()))
                .map(found -> {
                    UUID next = found.size() == filter.limit()
                            ? found.get(found.size() - 1).id()
                            : null;
                    return new TaskPage(found, next);
                });
    }

    /**
     * Every queue of this node, by name: this node's custody and meters, or, for a tenant's key, that
     * tenant's tasks as the journal holds them (another tenant's counts are not its business).
     */
    public Future<List<QueueView>> queues(Caller caller) {
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> caller.seesEveryTenant()
                        ? Future.succeededFuture(nodeQueues())
                        : reads.tenantCounts(caller.tenant(), clock.instant()).map(this::tenantQueues));
    }

    /**
     * Pauses ({@code paused}) or resumes a queue on every node: an admin's call. The answer comes once
     * this node applies it; the others follow within a second.
     */
    public Future<QueueControl> pause(Caller caller, String queue, boolean paused) {
        return permitted(() -> {
                    caller.require(Scope.ADMIN);
                    if (queues.get(queue) == null) {
                        throw NotFoundException.queue(queue);
                    }
                })
                .compose(v -> pauses.set(queue, paused, caller.keyId()));
    }

    // ---- schedules ----------------------------------------------------------------------------

    /**
     * Makes a schedule: an admin's call, as a schedule submits tasks on its own for as long as it
     * lives (they have no tenant). 409 for a name taken.
     */
    public Future<ScheduleView> createSchedule(Caller caller, JsonObject body) {
        // Null: made, then deleted by another caller before it could be read back.
        return permitted(() -> caller.require(Scope.ADMIN))
                .compose(v -> schedules.create(body, caller.keyId()))
                .map(view -> found(view, String.valueOf(body.getValue("name"))));
    }

    /** Every schedule, with its next fire times and last result; for callers that see every tenant. */
    public Future<List<ScheduleView>> schedules(Caller caller) {
        return permitted(() -> readSchedules(caller)).compose(v -> schedules.list());
    }

    /** One schedule with its ten newest ticks. */
    public Future<ScheduleView> schedule(Caller caller, String name) {
        return permitted(() -> readSchedules(caller))
                .compose(v -> schedules.get(name))
                .map(view -> found(view, name));
    }

    /** Pauses ({@code paused}) or resumes a schedule on every node: no tick fires while it is paused, nor is owed after. */
    public Future<ScheduleView> pauseSchedule(Caller caller, String name, boolean paused) {
        return permitted(() -> caller.require(Scope.ADMIN))
                .compose(v -> schedules.pause(name, paused, caller.keyId()))
                .map(view -> found(view, name));
    }

    /** Deletes a schedule: no tick of it fires once this answers; the tasks it made stay. */
    public Future<Void> deleteSchedule(Caller caller, String name) {
        return permitted(() -> caller.require(Scope.ADMIN))
                .compose(v -> schedules.delete(name))
                .map(found -> {
                    if (!found) {
                        throw NotFoundException.schedule(name);
                    }
                    return null;
                });
    }

    private static ScheduleView found(ScheduleView view, String name) {
        if (view == null) {
            throw NotFoundException.schedule(name);
        }
        return view;
    }

    private static void readSchedules(Caller caller) {
        caller.require(Scope.READ);
        if (!caller.seesEveryTenant()) {
            throw new ForbiddenException(
                    "schedules and the tasks they make belong to no tenant: a key bound to a tenant"
                            + " does not see them");
        }
    }

    private List<QueueView> tenantQueues(List<TenantCounts> counts) {
        java.util.Map<String, TenantCounts> byQueue = new java.util.HashMap<>();
        counts.forEach(c -> byQueue.put(c.queue(), c));
        List<QueueView> list = new ArrayList<>();
        for (TaskQueue queue : queues.all()) {
            TenantCounts c = byQueue.getOrDefault(queue.name(), new TenantCounts(queue.name(), 0, 0, 0, 0, 0, 0));
            list.add(new QueueView(
                    queue.name(),
                    c.waiting(),
                    c.running(),
                    c.scheduled(),
                    queue.config().slots(),
                    queue.config().capacity(),
                    queue.config().scheduledCapacity(),
                    queue.config().tenantLimit(),
                    c.accepted(),
                    c.finished(),
                    c.waiting() + c.scheduled() + c.running(),
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    null,
                    pauses.control(queue.name()),
                    queue.config().keyLimits(),
                    null,
                    queue.config().rateLimit(),
                    null,
                    c.expired()));
        }
        return list;
    }

    private List<QueueView> nodeQueues() {
        long now = clock.millis();
        List<QueueView> list = new ArrayList<>();
        for (TaskQueue queue : queues.all()) {
            TaskQueue.Counts counts = queue.counts();
            QueueMeters meters = metrics.queue(queue.name());
            list.add(new QueueView(
                    queue.name(),
                    counts.waiting(),
                    counts.running(),
                    counts.scheduled(),
                    queue.config().slots(),
                    queue.config().capacity(),
                    queue.config().scheduledCapacity(),
                    queue.config().tenantLimit(),
                    counts.accepted(),
                    counts.finished(),
                    counts.unfinished(),
                    meters.rejectedCount(),
                    meters.fencedCount(),
                    meters.takeoverCount(),
                    queue.oldestWaitingAgeMs(now) / 1000.0,
                    meters.rates(),
                    counts.claimedAhead(),
                    counts.finishing(),
                    pauses.control(queue.name()),
                    queue.config().keyLimits(),
                    queue.heldByKeys(),
                    queue.config().rateLimit(),
                    queue.heldByRate(),
                    meters.expiredCount()));
        }
        return list;
    }

    /** The node's queues added up (a tenant's key: its tasks', as {@link #queues}). */
    public Future<Stats> stats(Caller caller) {
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> caller.seesEveryTenant()
                        ? Future.succeededFuture(nodeStats())
                        : queues(caller)
                                .map(list -> new Stats(
                                        list.stream()
                                                .mapToLong(QueueView::accepted)
                                                .sum(),
                                        list.stream()
                                                .mapToLong(QueueView::finished)
                                                .sum(),
                                        null,
                                        list.stream()
                                                .mapToLong(QueueView::waiting)
                                                .sum(),
                                        list.stream()
                                                .mapToLong(QueueView::scheduled)
                                                .sum(),
                                        list.stream()
                                                .mapToLong(QueueView::running)
                                                .sum(),
                                        null,
                                        list.stream()
                                                .mapToLong(QueueView::expired)
                                                .sum())));
    }

    private Stats nodeStats() {
        long accepted = 0;
        long finished = 0;
        long rejected = 0;
        long expired = 0;
        int waiting = 0;
        int scheduled = 0;
        int running = 0;
        double[] rates = new double[4];
        for (TaskQueue queue : queues.all()) {
            // Each queue's counts are one consistent reading; sums of consistent readings balance too.
            TaskQueue.Counts counts = queue.counts();
            QueueMeters meters = metrics.queue(queue.name());
            accepted += counts.accepted();
            finished += counts.finished();
            waiting += counts.waiting();
            scheduled += counts.scheduled();
            running += counts.running();
            rejected += meters.rejectedCount();
            expired += meters.expiredCount();
            QueueMeters.Rates r = meters.rates();
            rates[0] += r.arrivals10s();
            rates[1] += r.arrivals60s();
            rates[2] += r.completions10s();
            rates[3] += r.completions60s();
        }
        return new Stats(
                accepted,
                finished,
                rejected,
                waiting,
                scheduled,
                running,
                new QueueMeters.Rates(rates[0], rates[1], rates[2], rates[3]),
                expired);
    }

    // ---- acting on tasks ----------------------------------------------------------------------

    /** Cancels a task: a pending one at once, a running one by asking its worker. */
    public Future<Cancellation> cancel(Caller caller, UUID id) {
        return permitted(() -> caller.require(Scope.SUBMIT))
                .compose(v -> visibleTask(caller, id))
                .compose(v -> control.cancel(id, caller.keyId()))
                .map(found -> {
                    if (found == null) {
                        throw new NotFoundException("task", id);
                    }
                    if (found.before().terminal()) {
                        throw new TaskStateConflictException(
                                TaskStateConflictException.Kind.ALREADY_FINISHED, id, found.before());
                    }
                    return new Cancellation(id, found.after() == TaskState.RUNNING);
                });
    }

    /** Cancels every unfinished task of a batch. */
    public Future<BatchCancellation> cancelBatch(Caller caller, UUID id) {
        return permitted(() -> caller.require(Scope.SUBMIT))
                .compose(v -> visibleBatch(caller, id))
                .compose(v -> control.cancelBatch(id, caller.keyId()))
                .map(found -> {
                    if (found.isEmpty()) {
                        throw new NotFoundException("batch", id);
                    }
                    int cancelled = 0;
                    int cancelling = 0;
                    int finished = 0;
                    for (Cancelled task : found) {
                        if (task.before().terminal()) {
                            finished++;
                        } else if (task.after() == TaskState.RUNNING) {
                            cancelling++;
                        } else {
                            cancelled++;
                        }
                    }
                    return new BatchCancellation(id, cancelled, cancelling, finished);
                });
    }

    /** Puts a failed, cancelled or expired task back to pending with fresh attempts (and no deadline). */
    public Future<Void> retry(Caller caller, UUID id) {
        return permitted(() -> caller.require(Scope.SUBMIT))
                .compose(v -> visibleTask(caller, id))
                .compose(v -> control.retry(List.of(id), caller.keyId()))
                .compose(moved -> moved.isEmpty()
                        // Nothing moved: either there is no such task, or it is not failed, cancelled or expired.
                        ? reads.state(id).map(state -> {
                            if (state == null) {
                                throw new NotFoundException("task", id);
                            }
                            throw new TaskStateConflictException(
                                    TaskStateConflictException.Kind.NOT_RETRYABLE, id, state);
                        })
                        : Future.succeededFuture())
                .mapEmpty();
    }

    /** Retries up to {@code limit} dead letters of a queue (and of a type, unless null), oldest first. */
    public Future<List<UUID>> retryFailed(Caller caller, String queue, String type, int limit) {
        // Across tenants: an admin's.
        return permitted(() -> caller.require(Scope.ADMIN))
                .compose(v -> control.retryFailed(queue, type, limit, caller.keyId()));
    }

    // ---- remote workers -----------------------------------------------------------------------

    /**
     * Claims up to {@code max} tasks of a remote queue for {@code worker}, waiting up to {@code
     * waitMs} for one when none is there.
     */
    public Future<List<RemoteWorkers.Claimed>> claim(
            Caller caller, String queue, String worker, int max, Set<String> types, long waitMs, Future<Void> gone) {
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
        // A tenant's key takes only its tenant's tasks; a key that sees every tenant takes any.
        return remote.claim(queue, worker, max, new RemoteWorkers.Want(types, caller.tenant()), waitMs, gone);
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
                : mayWrite(caller, lease).compose(v -> remote.heartbeat(lease, id, percent, message, queue));
    }

    private static InvalidTaskException checkPercent(Integer percent) {
        return percent != null && (percent < 0 || percent > 100)
                ? new InvalidTaskException("progress.percent must be from 0 to 100")
                : null;
    }

    /** Ends a remote attempt succeeded. */
    public Future<TaskState> complete(Caller caller, UUID id, String lease, io.vertx.core.json.JsonObject result) {
        return mayWrite(caller, lease).compose(v -> remote.complete(lease, id, result, null));
    }

    /** Ends a remote attempt failed: retried (after {@code retryAfterMs}, or the queue's backoff) or failed for good. */
    public Future<RemoteWorkers.Outcome> fail(
            Caller caller, UUID id, String lease, String error, boolean retry, Long retryAfterMs) {
        if (error == null || error.isEmpty() || error.length() > MAX_ERROR) {
            return Future.failedFuture(
                    new InvalidTaskException("error must be a text of 1 to " + MAX_ERROR + " characters"));
        }
        if (retryAfterMs != null && (retryAfterMs < 0 || retryAfterMs > Admission.MAX_DELAY_MS)) {
            return Future.failedFuture(
                    new InvalidTaskException("retryAfterMs must be from 0 to " + Admission.MAX_DELAY_MS));
        }
        return mayWrite(caller, lease).compose(v -> remote.fail(lease, id, error, retry, retryAfterMs));
    }

    /** Completes many remote attempts; each is answered on its own. */
    public Future<List<Views.ItemResult<TaskState>>> completeAll(
            Caller caller, String queue, List<Views.LeaseWrite> writes) {
        return remoteQueue(queue)
                .compose(v -> permitted(() -> caller.requireWork(queue)))
                .compose(v -> each(
                        writes,
                        w -> null,
                        valid -> remote.completeAll(
                                valid.stream()
                                        .map(w -> new RemoteWorkers.Completion(w.id(), w.lease(), w.result()))
                                        .toList(),
                                queue)));
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
                                queue)));
    }

    /**
     * Whether the caller may write with this lease token: it may work the token's queue. The token
     * itself is the proof that the caller may see the task: it was handed only to a claim that did.
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
        TaskQueue found = queues.get(queue);
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
            java.util.function.Function<Views.LeaseWrite, InvalidTaskException> check,
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
                Future<T> f = outcomes.get(next++);
                results.add(new Views.ItemResult<>(
                        id, f.succeeded() ? f.result() : null, f.succeeded() ? null : f.cause()));
            }
            return results;
        });
    }

    /** Runs {@code action}; a refusal it throws (403, a bad field) becomes its failed future. */
    private static <T> Future<T> allowed(Supplier<Future<T>> action) {
        try {
            return action.get();
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    /** Succeeds when {@code check} does not throw; the start of a chain that must not run otherwise. */
    private static Future<Void> permitted(Runnable check) {
        try {
            check.run();
            return Future.succeededFuture();
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    // ---- API keys -----------------------------------------------------------------------------

    /**
     * Issues a key (id null: one is made up), stored by its hash; the answer holds its secret, this
     * once. This node knows it at once, the others at their next read of the keys (within a second).
     */
    public Future<Views.IssuedKey> issueKey(
            Caller caller, String id, String tenant, Set<String> scopes, Set<String> queues) {
        return permitted(() -> caller.require(Scope.ADMIN)).compose(v -> {
            String secret = ApiKeys.newSecret(random);
            String keyId = id != null ? id : ApiKeys.idFor(secret);
            AuthConfig.Key key;
            try {
                key = new AuthConfig.Key(keyId, ApiKeys.hash(secret), tenant, scopes, queues);
            } catch (ConfigException e) {
                return Future.failedFuture(new InvalidTaskException(e.getMessage()
                        .replace("auth.keys[" + keyId + "]", "key")
                        .replace("auth.keys: ", "")));
            }
            if (keys.configured(keyId)) {
                return Future.failedFuture(new KeyConflictException("key '" + keyId + "' is one of the config's"));
            }
            List<String> sortedScopes = key.scopes().stream().sorted().toList();
            List<String> sortedQueues = key.queues().stream().sorted().toList();
            return journalKeys
                    .insert(
                            new StoredKey(key.id(), key.hash(), key.tenant(), sortedScopes, sortedQueues),
                            caller.keyId())
                    .compose(inserted -> inserted
                            ? refreshKeys()
                            : Future.failedFuture(new KeyConflictException("key '" + keyId + "' exists (or existed)")))
                    .map(done -> new Views.IssuedKey(key.id(), secret, key.tenant(), sortedScopes, sortedQueues));
        });
    }

    /** Every key: the config's, and those issued through the API (revoked ones with their time). */
    public Future<List<Views.KeyInfo>> keys(Caller caller, List<AuthConfig.Key> configured) {
        return permitted(() -> caller.require(Scope.ADMIN))
                .compose(v -> journalKeys.all())
                .map(issued -> {
                    List<Views.KeyInfo> all = new ArrayList<>();
                    for (AuthConfig.Key key : configured) {
                        all.add(new Views.KeyInfo(
                                key.id(),
                                key.tenant(),
                                key.scopes().stream().sorted().toList(),
                                key.queues().stream().sorted().toList(),
                                "config",
                                null,
                                null,
                                null,
                                null));
                    }
                    for (KeyRecord key : issued) {
                        all.add(new Views.KeyInfo(
                                key.id(),
                                key.tenant(),
                                key.scopes(),
                                key.queues(),
                                "api",
                                key.createdAt(),
                                key.createdBy(),
                                key.revokedAt(),
                                key.revokedBy()));
                    }
                    return all;
                });
    }

    /** Revokes an issued key: this node refuses it at once, the others within a second. */
    public Future<Void> revokeKey(Caller caller, String id) {
        return permitted(() -> caller.require(Scope.ADMIN)).compose(v -> {
            if (keys.configured(id)) {
                return Future.failedFuture(
                        new KeyConflictException("key '" + id + "' is one of the config's: remove it there"));
            }
            return journalKeys
                    .revoke(id, caller.keyId())
                    .compose(revoked -> revoked ? refreshKeys() : Future.failedFuture(NotFoundException.key(id)));
        });
    }

    /** Reads the live issued keys from the journal: what every node does every second. */
    public Future<Void> refreshKeys() {
        return journalKeys.live().map(live -> {
            List<AuthConfig.Key> issued = new ArrayList<>(live.size());
            for (StoredKey k : live) {
                issued.add(new AuthConfig.Key(
                        k.id(), k.hash(), k.tenant(), Set.copyOf(k.scopes()), Set.copyOf(k.queues())));
            }
            keys.replaceIssued(issued);
            return null;
        });
    }

    // ---- following tasks ----------------------------------------------------------------------

    /**
     * Opens a stream of a task's transitions after {@code afterEventId} (0: from the start) into
     * the sink {@code sink} makes; the sink is made only once the stream can be served.
     */
    public Future<TaskStream> streamTask(Caller caller, UUID id, long afterEventId, Supplier<StreamSink> sink) {
        // The stream reads the task's snapshot itself: here only whether it exists, by its key.
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> visibleTask(caller, id))
                .compose(v -> reads.state(id))
                .compose(state -> state == null
                        ? Future.failedFuture(new NotFoundException("task", id))
                        : open(List.of(id), afterEventId, sink));
    }

    /** As {@link #streamTask}, for every task of a batch. */
    public Future<TaskStream> streamBatch(Caller caller, UUID id, long afterEventId, Supplier<StreamSink> sink) {
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> batchTaskIds(caller, id))
                .compose(ids -> open(ids, afterEventId, sink));
    }

    private Future<TaskStream> open(List<UUID> tasks, long afterEventId, Supplier<StreamSink> sink) {
        TaskStream stream = hub.open(tasks, afterEventId, sink);
        return stream == null
                ? Future.failedFuture(new TooManyStreamsException(maxStreams))
                : Future.succeededFuture(stream);
    }

    // ---- the node -----------------------------------------------------------------------------

    /** Up while the node takes work and its journal answers within two seconds. */
    public Future<Readiness> readiness() {
        if (admission.draining()) {
            return Future.succeededFuture(Readiness.SHUTTING_DOWN);
        }
        return reads.ping()
                .timeout(READY_TIMEOUT_MS, TimeUnit.MILLISECONDS)
                .map(v -> Readiness.UP)
                .otherwise(e -> Readiness.JOURNAL_DOWN);
    }

    /**
     * The node's metrics in the Prometheus text format. Blocking: writing every series takes 10 to
     * 25 ms of CPU, so callers run it off their event loop.
     */
    public String scrapeMetrics(Caller caller) {
        // Every queue's and tenant's figures: an admin's, unless the node opens them (auth.openMetrics).
        caller.require(Scope.ADMIN);
        return metrics.scrape();
    }

    private static TaskView visible(Caller caller, TaskView task, UUID id) {
        if (task == null || !caller.sees(task.tenant())) {
            throw new NotFoundException("task", id);
        }
        return task;
    }

    /** Succeeds when the caller may see the task, or when it does not exist (the operation answers that). */
    private Future<Void> visibleTask(Caller caller, UUID id) {
        return caller.seesEveryTenant()
                ? Future.succeededFuture()
                : reads.task(id).map(task -> {
                    visible(caller, task, id);
                    return null;
                });
    }

    /** As {@link #visibleTask}, for a batch: every one of its tasks must be visible. */
    private Future<Void> visibleBatch(Caller caller, UUID id) {
        return caller.seesEveryTenant()
                ? Future.succeededFuture()
                : visibleBatchView(caller, id).mapEmpty();
    }

    private Future<List<UUID>> batchTaskIds(Caller caller, UUID id) {
        return visibleBatch(caller, id).compose(v -> reads.batchTaskIds(id)).map(ids -> {
            if (ids.isEmpty()) {
                throw new NotFoundException("batch", id);
            }
            return ids;
        });
    }
}
