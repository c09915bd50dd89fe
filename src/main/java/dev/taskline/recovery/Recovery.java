package dev.taskline.recovery;

import dev.taskline.journal.Journal;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.Released;
import dev.taskline.model.Task;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueCustody;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/**
 * Brings journaled work back into memory: it puts lapsed leases (of any node) back to pending,
 * then pages waiting tasks into the queues that have room, oldest first within priority. The same
 * pass serves start-up and the periodic sweep; tests call {@link #runOnce} directly.
 */
public final class Recovery {

    private final Journal journal;
    private final NodeQueues<? extends QueueCustody> queues;
    private final TasklineMetrics metrics;
    private final int batchSize;
    private final Duration finishedTtl;

    public Recovery(
            Journal journal,
            NodeQueues<? extends QueueCustody> queues,
            TasklineMetrics metrics,
            int batchSize,
            Duration finishedTtl) {
        this.journal = journal;
        this.queues = queues;
        this.metrics = metrics;
        this.batchSize = batchSize;
        this.finishedTtl = finishedTtl;
    }

    /**
     * Deletes one batch of finished tasks past retention (with their history) and of expired
     * idempotency keys; returns how many tasks went. Kept apart from {@link #runOnce} because it
     * need not run as often.
     */
    public Future<Integer> cleanOnce() {
        return journal.deleteOld(finishedTtl, batchSize);
    }

    /** One full pass. Not re-entrant: the caller waits for one pass before starting the next. */
    public Future<Pass> runOnce() {
        return runOnce(true);
    }

    /**
     * One pass. With {@code checkJournal} false, only queues that just got lapsed leases back look
     * for waiting work in the journal: the look costs a count over the queue's whole backlog, so the
     * timed passes take it only every few rounds (see {@link RecoveryVerticle}).
     */
    public Future<Pass> runOnce(boolean checkJournal) {
        return journal.releaseExpired(batchSize).compose(released -> {
            Map<String, Integer> byQueue = new HashMap<>();
            for (Released task : released) {
                QueueCustody queue = queues.get(task.queue());
                if (task.failed()) {
                    if (queue != null) {
                        queue.remove(task.id()); // a copy this node still held is done with
                        metrics.queue(queue.name()).failed();
                    }
                } else {
                    byQueue.merge(task.queue(), 1, Integer::sum);
                }
            }
            byQueue.forEach((name, n) -> {
                if (queues.get(name) != null) {
                    metrics.queue(name).takeovers(n);
                }
            });
            List<QueueCustody> look = new ArrayList<>();
            for (QueueCustody queue : queues.all()) {
                if (checkJournal || byQueue.containsKey(queue.name())) {
                    look.add(queue);
                }
            }
            return pageIn(look, 0, 0).map(paged -> new Pass(released.size(), paged));
        });
    }

    private Future<Integer> pageIn(List<QueueCustody> remaining, int index, int pagedSoFar) {
        if (index == remaining.size()) {
            return Future.succeededFuture(pagedSoFar);
        }
        QueueCustody queue = remaining.get(index);
        int room = Math.min(queue.room(), batchSize);
        if (room <= 0) {
            return pageIn(remaining, index + 1, pagedSoFar);
        }
        int held = queue.heldPending(journal.clock().millis());
        // Skipping every id held here costs the page-in query dearly with a long queue. When the
        // journal shows no more due pending tasks than this node holds as pending, none is someone
        // else's. But the two readings race (a claim that commits between them hides a task of
        // someone else's from the comparison), so a skip leaves the room signal armed while anything
        // is pending: the verticle spaces the passes that signal asks for (see RecoveryVerticle).
        return journal.pendingCount(queue.name()).compose(pending -> {
            if (pending <= held) {
                queue.journalHasMore(pending > 0);
                return pageIn(remaining, index + 1, pagedSoFar);
            }
            return pageInQueue(queue, room).compose(added -> pageIn(remaining, index + 1, pagedSoFar + added));
        });
    }

    /** Up to {@code most} of the queue's due waiting tasks that this node does not hold, in its order. */
    static Future<List<Task>> due(Journal journal, QueueCustody queue, int most) {
        return journal.pageIn(
                queue.name(),
                queue.heldIds(),
                most,
                queue.config().agingPerSecond(),
                queue.config().fairness().tenants());
    }

    private Future<Integer> pageInQueue(QueueCustody queue, int room) {
        return due(journal, queue, room).compose(found -> {
            // A full page means the journal may hold more than fitted; the queue calls back for more
            // once it has drained to half, so waiting work follows freed room without a timer.
            queue.journalHasMore(found.size() == room);
            return Future.succeededFuture(queue.offer(found));
        });
    }

    /** What one pass did: leases put back to pending, tasks paged into memory. */
    public record Pass(int released, int pagedIn) {}
}
