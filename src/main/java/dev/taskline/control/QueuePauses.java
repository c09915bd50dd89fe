package dev.taskline.control;

import dev.taskline.journal.JournalControls;
import dev.taskline.model.QueueControl;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueSwitch;
import io.vertx.core.Future;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicLong;

/**
 * Pause and resume, cluster-wide. The switch lives in the journal, so it holds on every node that
 * shares it and outlives restarts; each node reads it on start (before its workers run) and then
 * about twice a second (on a {@code Periodic} timer), and applies it to its own queues. A pause stops
 * starts, not the tasks already running; a paused queue still takes submissions within capacity.
 */
public final class QueuePauses {

    private final JournalControls journal;
    private final NodeQueues<? extends QueueSwitch> queues;
    private final Map<String, QueueControl> controls = new ConcurrentHashMap<>();
    // Reads may answer out of order (two connections); one issued later saw a later journal, so an
    // answer older than the last one applied is dropped rather than undo a pause just made.
    private final AtomicLong issued = new AtomicLong();
    private long applied;

    public QueuePauses(JournalControls journal, NodeQueues<? extends QueueSwitch> queues) {
        this.journal = journal;
        this.queues = queues;
    }

    /** Reads the journal's switches and applies them to this node's queues. */
    public Future<Void> runOnce() {
        long read = issued.incrementAndGet();
        return journal.controls().map(list -> {
            apply(read, list);
            return null;
        });
    }

    private synchronized void apply(long read, List<QueueControl> list) {
        if (read < applied) {
            return;
        }
        applied = read;
        Map<String, QueueControl> byQueue = new HashMap<>();
        list.forEach(c -> byQueue.put(c.queue(), c));
        for (QueueSwitch queue : queues.all()) {
            QueueControl control = byQueue.getOrDefault(queue.name(), QueueControl.none(queue.name()));
            controls.put(queue.name(), control);
            queue.paused(control.paused());
        }
    }

    /**
     * Pauses ({@code paused}) or resumes a queue of this node for the key {@code by}: journaled,
     * then applied here before the future completes; other nodes follow within their next read.
     */
    public Future<QueueControl> set(String queue, boolean paused, String by) {
        return journal.setPaused(queue, paused, by).compose(v -> runOnce()).map(v -> control(queue));
    }

    /** The queue's switch as this node last read it. */
    public QueueControl control(String queue) {
        return controls.getOrDefault(queue, QueueControl.none(queue));
    }
}
