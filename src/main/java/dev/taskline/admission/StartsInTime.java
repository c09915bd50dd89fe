package dev.taskline.admission;

import dev.taskline.config.QueueConfig;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.Insert;
import dev.taskline.model.problem.DeadlineUnmeetableException;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueRoom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

/** Whether the tasks of a submission that are due now and have a deadline would start by it here. */
final class StartsInTime {

    private final NodeQueues<? extends QueueRoom> queues;
    private final TasklineMetrics metrics;

    StartsInTime(NodeQueues<? extends QueueRoom> queues, TasklineMetrics metrics) {
        this.queues = queues;
        this.metrics = metrics;
    }

    /**
     * Refuses, before any room is taken, a submission with a task due now that its queue on this
     * node would not start by its deadline, by {@link StartEstimate}, or would not start at all (it is
     * paused). Its tasks ahead of one another count: a batch is refused whole when any one of them
     * would miss, and the answer names the one that misses by most. A task due later is not
     * estimated: the backlog it will meet is not this one.
     */
    void check(List<Insert> tasks, Instant now) {
        if (!anyDueWithDeadline(tasks, now)) {
            return; // as a rule: and then nothing is allocated for it
        }
        Map<String, List<Integer>> dueByQueue = new LinkedHashMap<>();
        for (int i = 0; i < tasks.size(); i++) {
            Insert task = tasks.get(i);
            if (!task.runAt().isAfter(now)) {
                dueByQueue
                        .computeIfAbsent(task.task().queue(), q -> new ArrayList<>())
                        .add(i);
            }
        }
        boolean batch = tasks.get(0).task().batchId() != null;
        DeadlineUnmeetableException worst = null;
        for (Map.Entry<String, List<Integer>> due : dueByQueue.entrySet()) {
            QueueRoom queue = queues.get(due.getKey());
            QueueMeters meters = metrics.queue(queue.name());
            // One reading of the queue per priority: the tasks of one priority differ only in how many of
            // their own submission go before them.
            Map<Integer, List<Integer>> byPriority = new LinkedHashMap<>();
            for (int i : due.getValue()) {
                if (tasks.get(i).startBy() != null) {
                    byPriority
                            .computeIfAbsent(tasks.get(i).task().priority(), p -> new ArrayList<>())
                            .add(i);
                }
            }
            for (List<Integer> same : byPriority.values()) {
                int[] peers = new int[same.size()];
                for (int k = 0; k < peers.length; k++) {
                    peers[k] = peersBefore(tasks, due.getValue(), same.get(k));
                }
                QueueRoom.Outlook outlook = queue.outlook(tasks.get(same.get(0)).task(), peers);
                for (int k = 0; k < peers.length; k++) {
                    int i = same.get(k);
                    Instant startBy = tasks.get(i).startBy();
                    DeadlineUnmeetableException refusal;
                    if (outlook.paused()) {
                        refusal = new DeadlineUnmeetableException(
                                queue.name(),
                                batch ? i : -1,
                                startBy,
                                null,
                                null,
                                true,
                                RetryAfter.UNKNOWN_RATE_SECONDS);
                    } else {
                        StartEstimate estimate = StartEstimate.of(
                                outlook.startsBefore()[k],
                                outlook.freeSlots(),
                                queue.config().slots(),
                                meters.completionRate(),
                                meters.meanRunMillis(),
                                sharedRateLimit(queue));
                        if (estimate.meets(now, startBy)) {
                            continue;
                        }
                        refusal = new DeadlineUnmeetableException(
                                queue.name(),
                                batch ? i : -1,
                                startBy,
                                estimate.startAt(now),
                                estimate.untilStart().toMillis(),
                                false,
                                estimate.retryAfterSeconds(now, startBy));
                    }
                    if (worst == null || refusal.retryAfterSeconds() > worst.retryAfterSeconds()) {
                        worst = refusal;
                    }
                }
            }
        }
        if (worst != null) {
            metrics.queue(worst.queue()).rejectedDeadline(tasks.size());
            throw worst;
        }
    }

    private static boolean anyDueWithDeadline(List<Insert> tasks, Instant now) {
        for (Insert task : tasks) {
            if (task.startBy() != null && !task.runAt().isAfter(now)) {
                return true;
            }
        }
        return false;
    }

    /** Tasks of the submission, due now in the same queue, that go before task {@code i}: higher priority, or earlier. */
    private static int peersBefore(List<Insert> tasks, List<Integer> sameQueue, int i) {
        int priority = tasks.get(i).task().priority();
        int n = 0;
        for (int j : sameQueue) {
            int other = tasks.get(j).task().priority();
            if (other > priority || (other == priority && j < i)) {
                n++;
            }
        }
        return n;
    }

    /**
     * The rate limit that paces the tasks before a new one, as the deadline estimate reads it: the
     * queue's own budget, which every task of the queue spends. A per-key budget is left out: the
     * tasks ahead of other keys do not spend it, and the estimate does not count a key's own.
     */
    private static QueueConfig.RateLimit sharedRateLimit(QueueRoom queue) {
        QueueConfig.RateLimit limit = queue.config().rateLimit();
        return limit == null || limit.perKey() ? null : limit;
    }
}
