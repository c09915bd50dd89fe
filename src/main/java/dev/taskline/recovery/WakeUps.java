package dev.taskline.recovery;

import dev.taskline.journal.Journal;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueCustody;
import dev.taskline.support.Coalesced;
import io.vertx.core.Future;
import java.util.Map;
import java.util.Set;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;
import java.util.function.Function;

/**
 * Pages in due work at once when another node says some may be waiting (a submission it could not
 * start, a retry, a flow child made ready): as many tasks as this node could start now, no more, so
 * that an idle node takes the work a busy one holds in its line, and no node takes in more than it
 * starts. The claims that follow are fenced as every claim: the busy node's own claim of a task
 * taken here fails, and it drops the task. Safe from any thread; wake-ups of one queue that come
 * while its page-in runs make one more page-in after it, not one each.
 */
public final class WakeUps {

    private final Journal journal;
    private final NodeQueues<? extends QueueCustody> queues;
    private final Function<QueueCustody, Future<Integer>> demand;
    private final int batchSize;
    /** Per queue: its page-in, one at a time. */
    private final Map<String, Coalesced> passes = new ConcurrentHashMap<>();

    private final AtomicLong paged = new AtomicLong();
    /**
     * Queues whose last wake-up found as many tasks as it asked for: other nodes may hold more that
     * they cannot start, and this node takes the next as soon as a slot of its own frees.
     */
    private final Set<String> more = ConcurrentHashMap.newKeySet();

    /**
     * @param demand for a queue, how many tasks this node could start now (a local queue's free
     *               slots; a remote queue's, as far as the claims waiting on it would take)
     */
    public WakeUps(
            Journal journal,
            NodeQueues<? extends QueueCustody> queues,
            Function<QueueCustody, Future<Integer>> demand,
            int batchSize) {
        this.journal = journal;
        this.queues = queues;
        this.demand = demand;
        this.batchSize = batchSize;
    }

    /** Due work of {@code queueName} may wait in the journal; a queue this node does not serve is ignored. */
    public void due(String queueName) {
        QueueCustody queue = queues.get(queueName);
        if (queue == null) {
            return;
        }
        passes.computeIfAbsent(queueName, q -> new Coalesced("paging in on a wake-up", () -> pageIn(queue)))
                .accept(queueName);
    }

    /** A slot of the queue freed here and nothing waits for it: page in again if others had more. */
    public void idleSlot(String queueName) {
        if (more.contains(queueName)) {
            due(queueName);
        }
    }

    /** Every queue this node serves, as after a reconnection: what was said meanwhile was not heard. */
    public void dueEverywhere() {
        for (QueueCustody queue : queues.all()) {
            due(queue.name());
        }
    }

    /** Tasks paged in on wake-ups since start. */
    public long paged() {
        return paged.get();
    }

    private Future<Integer> pageIn(QueueCustody queue) {
        return demand.apply(queue).compose(want -> {
            int most = Math.min(Math.min(want, queue.room()), batchSize);
            if (most <= 0) {
                return Future.succeededFuture(0);
            }
            return Recovery.due(journal, queue, most).map(found -> {
                if (found.size() == most) {
                    more.add(queue.name());
                } else {
                    more.remove(queue.name());
                }
                int added = queue.offer(found);
                paged.addAndGet(added);
                return added;
            });
        });
    }
}
