package dev.taskline.service;

import static dev.taskline.service.Permits.allowed;
import static dev.taskline.service.Permits.permitted;

import dev.taskline.admission.Admission;
import dev.taskline.admission.Admitted;
import dev.taskline.admission.Submission;
import dev.taskline.config.TasklineConfig;
import dev.taskline.control.TaskControl;
import dev.taskline.events.EventHub;
import dev.taskline.events.StreamSink;
import dev.taskline.events.TaskStream;
import dev.taskline.journal.JournalReads;
import dev.taskline.model.BatchView;
import dev.taskline.model.Cancelled;
import dev.taskline.model.TaskState;
import dev.taskline.model.TaskView;
import dev.taskline.model.problem.NotFoundException;
import dev.taskline.model.problem.TaskStateConflictException;
import dev.taskline.service.Views.BatchCancellation;
import dev.taskline.service.Views.Cancellation;
import dev.taskline.service.Views.TaskFilter;
import dev.taskline.service.Views.TaskPage;
import io.vertx.core.Future;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Tasks and batches, as a caller may ask for them: submit, read, list, follow, cancel, retry. Each
 * operation takes the {@link Caller}, so that the rules on who may do what, and on tenants, are
 * applied here once for every way in (the HTTP API, its streams, the dashboard). It answers with
 * records and fails with typed problems; turning them into a protocol's answers is the caller's
 * business.
 */
public final class TaskService {

    private final Admission admission;
    private final TaskControl control;
    private final JournalReads reads;
    private final EventHub hub;
    private final int maxStreams;
    private final double tenantShare;

    /** @param tenantShare the part of {@code maxStreams} one tenant may hold */
    public TaskService(
            Admission admission,
            TaskControl control,
            JournalReads reads,
            EventHub hub,
            int maxStreams,
            double tenantShare) {
        this.tenantShare = tenantShare;
        this.admission = admission;
        this.control = control;
        this.reads = reads;
        this.hub = hub;
        this.maxStreams = maxStreams;
    }

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

    /** The task with its history. */
    public Future<TaskView> task(Caller caller, UUID id) {
        return allowed(() -> {
            caller.require(Scope.READ);
            return reads.task(id).map(task -> {
                TaskView seen = visible(caller, task, id);
                // Who cancelled or retried it is an admin's to know.
                return caller.isAdmin() ? seen : seen.withoutActors();
            });
        });
    }

    /** A page of the history of a task the caller may see, after event {@code after} (null: the first). */
    public Future<List<dev.taskline.model.Event>> history(Caller caller, UUID id, Long after, int limit) {
        return task(caller, id).compose(task -> reads.history(id, after, limit));
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
                    // A short page may still have a next: its filter matched few of the tasks the page
                    // read (JournalReads.LIST_SCAN), and the next page goes on past them.
                    List<TaskView> tasks = found.tasks();
                    UUID next = tasks.size() == filter.limit()
                            ? tasks.get(tasks.size() - 1).id()
                            : found.scannedTo();
                    return new TaskPage(tasks, next);
                });
    }

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
                        : open(caller, List.of(id), afterEventId, sink));
    }

    /** As {@link #streamTask}, for every task of a batch. */
    public Future<TaskStream> streamBatch(Caller caller, UUID id, long afterEventId, Supplier<StreamSink> sink) {
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> batchTaskIds(caller, id))
                .compose(ids -> open(caller, ids, afterEventId, sink));
    }

    /** Opens a stream of these tasks' transitions (a flow's), once the caller was found to see them. */
    Future<TaskStream> open(Caller caller, List<UUID> tasks, long afterEventId, Supplier<StreamSink> sink) {
        Supplier<StreamSink> told = caller.isAdmin() ? sink : () -> new WithoutActors(sink.get());
        return allowed(() -> Future.succeededFuture(hub.open(tasks, afterEventId, told, holders(caller))));
    }

    /**
     * Whose shares of the node's streams a new one takes: a tenant's, whatever the door (its keys,
     * its dashboard sessions, the stream tokens minted for its tasks), and a stream token's own, one
     * at a time; a key that sees every tenant is held to the node's maximum alone.
     */
    private List<EventHub.Holder> holders(Caller caller) {
        List<EventHub.Holder> holders = new ArrayList<>(2);
        if (caller.isStreamToken()) {
            holders.add(new EventHub.Holder(caller.keyId(), 1, "this stream token"));
        }
        if (caller.tenant() != null) {
            holders.add(new EventHub.Holder(
                    "tenant:" + caller.tenant(),
                    TasklineConfig.share(maxStreams, tenantShare),
                    "tenant '" + caller.tenant() + "'"));
        }
        return holders;
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
