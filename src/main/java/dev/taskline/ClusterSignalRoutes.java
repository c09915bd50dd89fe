package dev.taskline;

import dev.taskline.cluster.ClusterSignals;
import dev.taskline.control.QueuePauses;
import dev.taskline.events.EventHub;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueSlots;
import dev.taskline.recovery.WakeUps;
import dev.taskline.schedule.Scheduler;
import dev.taskline.service.KeyService;
import io.vertx.core.Future;

/** Where what the other nodes tell goes on this node: each channel to the one part that acts on it. */
final class ClusterSignalRoutes implements ClusterSignals {

    private final WakeUps wakeUps;
    private final NodeQueues<? extends QueueSlots> queues;
    private final Scheduler scheduler;
    private final QueuePauses pauses;
    private final KeyService keys;
    private final EventHub hub;

    ClusterSignalRoutes(
            WakeUps wakeUps,
            NodeQueues<? extends QueueSlots> queues,
            Scheduler scheduler,
            QueuePauses pauses,
            KeyService keys,
            EventHub hub) {
        this.wakeUps = wakeUps;
        this.queues = queues;
        this.scheduler = scheduler;
        this.pauses = pauses;
        this.keys = keys;
        this.hub = hub;
    }

    @Override
    public void due(String queue) {
        if (queue == null) {
            wakeUps.dueEverywhere();
        } else {
            wakeUps.due(queue);
        }
    }

    @Override
    public void keyFreed(String queue) {
        for (QueueSlots q : queues.all()) {
            if (queue == null || q.name().equals(queue)) {
                q.retryKeys();
            }
        }
    }

    @Override
    public void schedulesChanged() {
        scheduler.changed();
    }

    @Override
    public Future<?> readSwitches() {
        return pauses.runOnce();
    }

    @Override
    public Future<?> readKeys() {
        return keys.refresh();
    }

    @Override
    public Future<?> catchStreamsUp() {
        return hub.catchUp();
    }
}
