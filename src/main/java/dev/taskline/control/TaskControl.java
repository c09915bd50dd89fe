package dev.taskline.control;

import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalReads;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.BusAddresses;
import dev.taskline.model.Cancelled;
import dev.taskline.model.Task;
import dev.taskline.model.TaskState;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueCustody;
import io.vertx.core.Future;
import io.vertx.core.eventbus.EventBus;
import io.vertx.core.json.JsonArray;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * What users do to tasks after submitting them: cancel, and retry from the dead-letter set. Each is
 * one journal statement; the in-memory queues and the workers follow.
 */
public final class TaskControl {

    public static final int MAX_BULK_RETRY = 1_000;

    private final Journal journal;
    private final JournalReads reads;
    private final NodeQueues<? extends QueueCustody> queues;
    private final EventBus eventBus;
    private final TasklineMetrics metrics;

    public TaskControl(
            Journal journal,
            JournalReads reads,
            NodeQueues<? extends QueueCustody> queues,
            EventBus eventBus,
            TasklineMetrics metrics) {
        this.journal = journal;
        this.reads = reads;
        this.queues = queues;
        this.eventBus = eventBus;
        this.metrics = metrics;
    }

    /** Cancels one task, for the key {@code by} (null: none). Null when there is no such task. */
    public Future<Cancelled> cancel(UUID id, String by) {
        return cancel(List.of(id), null, by).map(found -> found.isEmpty() ? null : found.get(0));
    }

    /** Cancels every unfinished task of a batch; answers for each task of the batch. */
    public Future<List<Cancelled>> cancelBatch(UUID batchId, String by) {
        return cancel(List.of(), batchId, by);
    }

    /** Cancels these tasks (a flow's unfinished ones); answers for each task found. */
    public Future<List<Cancelled>> cancelTasks(List<UUID> ids, String by) {
        return ids.isEmpty() ? Future.succeededFuture(List.of()) : cancel(ids, null, by);
    }

    private Future<List<Cancelled>> cancel(List<UUID> ids, UUID batchId, String by) {
        return journal.cancel(ids, batchId, by).map(found -> {
            JsonArray running = new JsonArray();
            for (Cancelled task : found) {
                if (task.before() == TaskState.PENDING) {
                    // The journal already refuses its claim (version bumped); this frees its place now.
                    for (QueueCustody queue : queues.all()) {
                        if (queue.remove(task.id())) {
                            metrics.queue(queue.name()).cancelledWaiting();
                            break;
                        }
                    }
                } else if (task.before() == TaskState.RUNNING) {
                    running.add(task.id().toString());
                }
            }
            if (!running.isEmpty()) {
                // Workers on this node stop at once; those on other nodes learn it at their next heartbeat.
                eventBus.publish(BusAddresses.CANCEL, running);
            }
            return found;
        });
    }

    /** Puts failed, cancelled or expired tasks back to pending with fresh attempts; returns the ids moved. */
    public Future<List<UUID>> retry(List<UUID> ids, String by) {
        return journal.retry(ids, by).map(moved -> {
            List<UUID> movedIds = new ArrayList<>(moved.size());
            for (Task task : moved) {
                movedIds.add(task.id());
                QueueCustody queue = queues.get(task.queue());
                if (queue != null) {
                    // No room now: the task waits in the journal and is paged in as room frees.
                    queue.offer(List.of(task));
                }
            }
            return movedIds;
        });
    }

    /** Retries up to {@code limit} dead letters of a queue (and type), oldest first. */
    public Future<List<UUID>> retryFailed(String queue, String type, int limit, String by) {
        if (queues.get(queue) == null) {
            return Future.failedFuture(new InvalidTaskException("queue: unknown queue '" + queue + "'"));
        }
        if (limit < 1 || limit > MAX_BULK_RETRY) {
            return Future.failedFuture(new InvalidTaskException("limit must be from 1 to " + MAX_BULK_RETRY));
        }
        return reads.failedIds(queue, type, limit).compose(ids -> retry(ids, by));
    }
}
