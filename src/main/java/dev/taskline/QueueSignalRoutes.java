package dev.taskline;

import dev.taskline.cluster.Cluster;
import dev.taskline.queue.Promoter;
import dev.taskline.queue.QueueSignals;
import dev.taskline.recovery.RecoveryVerticle;
import dev.taskline.recovery.WakeUps;
import dev.taskline.worker.RemoteWorkers;
import dev.taskline.worker.WorkerVerticle;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Where the queues' signals go on this node: each to the one part that acts on it. The queues give
 * them outside their locks, on whatever thread changed them (see {@link QueueSignals}); each part
 * here takes them from any thread, and ignores them while it is not deployed.
 */
final class QueueSignalRoutes implements QueueSignals {

    private final Promoter promoter;
    private final RecoveryVerticle recovery;
    private final RemoteWorkers remote;
    private final Cluster cluster;
    private final WakeUps wakeUps;
    /** The worker of each queue run on this node, once made; the others are the remote workers'. */
    private final Map<String, WorkerVerticle> workers = new ConcurrentHashMap<>();

    QueueSignalRoutes(
            Promoter promoter, RecoveryVerticle recovery, RemoteWorkers remote, Cluster cluster, WakeUps wakeUps) {
        this.promoter = promoter;
        this.recovery = recovery;
        this.remote = remote;
        this.cluster = cluster;
        this.wakeUps = wakeUps;
    }

    /** {@code worker} runs the tasks of {@code queue} on this node. */
    void served(String queue, WorkerVerticle worker) {
        workers.put(queue, worker);
    }

    @Override
    public void available(String queue) {
        WorkerVerticle worker = workers.get(queue);
        if (worker != null) {
            worker.available();
        } else {
            remote.available(queue);
        }
    }

    @Override
    public void room(String queue) {
        recovery.room();
    }

    @Override
    public void scheduled(String queue) {
        promoter.scheduled();
    }

    @Override
    public void held(String queue) {
        cluster.tellDue(queue);
    }

    @Override
    public void keyFreed(String queue) {
        cluster.tellKeyFreed(queue);
    }

    @Override
    public void idleSlot(String queue) {
        wakeUps.idleSlot(queue);
    }
}
