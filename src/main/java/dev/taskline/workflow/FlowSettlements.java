package dev.taskline.workflow;

import dev.taskline.metrics.FlowMeters;
import dev.taskline.model.Settled;
import dev.taskline.model.Task;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueCustody;
import java.time.Clock;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/**
 * What this node does once one of its writes has settled children in their flows: the children
 * that became pending and are due go straight into this node's queue for them, so that a chain's
 * next step starts here without waiting for a page-in; those it cannot hold (no room, due later, or
 * a queue this node does not run) stay pending in the journal, where a page-in finds them, and the
 * queue is told so.
 */
public final class FlowSettlements {

    private final NodeQueues<? extends QueueCustody> queues;
    private final FlowMeters meters;
    private final Clock clock;

    public FlowSettlements(NodeQueues<? extends QueueCustody> queues, FlowMeters meters, Clock clock) {
        this.queues = queues;
        this.meters = meters;
        this.clock = clock;
    }

    /** Takes what a committed write of this node settled (see JournalSignals). */
    public void settled(Settled settled) {
        settled.flowsEnded().forEach(end -> meters.finished(end.state()));
        if (settled.ready().isEmpty()) {
            return;
        }
        meters.unblocked(settled.ready().size());
        long now = clock.millis();
        Map<String, List<Task>> byQueue = new LinkedHashMap<>();
        for (Task task : settled.ready()) {
            byQueue.computeIfAbsent(task.queue(), q -> new ArrayList<>()).add(task);
        }
        byQueue.forEach((name, tasks) -> {
            QueueCustody queue = queues.get(name);
            if (queue == null) {
                return;
            }
            List<Task> due = new ArrayList<>(tasks.size());
            for (Task task : tasks) {
                if (task.dueAtMillis() <= now) {
                    due.add(task);
                }
            }
            queue.offerOrLeave(due, tasks.size());
        });
    }
}
