package dev.taskline.control;

import dev.taskline.journal.Journal;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.Expired;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueCustody;
import io.vertx.core.Future;

/**
 * Ends the tasks that were not started by their deadline: expired, in the journal (every node's,
 * a batch at a time, until none is left), then out of this node's queues as a cancel takes a
 * pending task out, and counted (by the node whose sweep expired it, so a cluster's count is the
 * sum of its nodes'). Streams hear of it through the journal's change listener.
 *
 * <p>The sweep is bookkeeping, not the guarantee: claims refuse a task past its deadline on their
 * own (see the claim statements), so a task never runs late between two passes. A task that another
 * node holds leaves that node's memory when its worker reaches it and the claim is refused. Run by a
 * {@code Periodic} timer; tests call {@link #runOnce} with a settable clock.
 */
public final class DeadlineSweep {

    private final Journal journal;
    private final NodeQueues<? extends QueueCustody> queues;
    private final TasklineMetrics metrics;
    private final int batchSize;

    public DeadlineSweep(
            Journal journal, NodeQueues<? extends QueueCustody> queues, TasklineMetrics metrics, int batchSize) {
        this.journal = journal;
        this.queues = queues;
        this.metrics = metrics;
        this.batchSize = batchSize;
    }

    /** One pass: expires every overdue task, a batch per statement; the future holds how many. */
    public Future<Integer> runOnce() {
        return sweep(0);
    }

    private Future<Integer> sweep(int soFar) {
        return journal.expireOverdue(batchSize).compose(expired -> {
            for (Expired task : expired) {
                QueueCustody queue = queues.get(task.queue());
                if (queue == null) {
                    continue; // a queue this node does not serve has no meters here
                }
                queue.remove(task.id());
                metrics.queue(queue.name()).expired();
            }
            int total = soFar + expired.size();
            // A full batch may have left more behind; a short one was the last.
            return expired.size() == batchSize ? sweep(total) : Future.succeededFuture(total);
        });
    }
}
