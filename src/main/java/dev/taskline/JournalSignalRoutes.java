package dev.taskline;

import dev.taskline.cluster.Cluster;
import dev.taskline.events.EventHub;
import dev.taskline.journal.JournalSignals;
import dev.taskline.model.Settled;
import dev.taskline.workflow.FlowSettlements;
import java.util.Collection;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArrayList;
import java.util.function.Consumer;

/** Where the journal's signals go on this node: each to the part that acts on it. */
final class JournalSignalRoutes implements JournalSignals {

    private final EventHub hub;
    private final Cluster cluster;
    private final FlowSettlements settlements;
    // Observers from outside the node (tests waiting for a transition); the node's own parts are fields.
    private final List<Consumer<Collection<UUID>>> watchers = new CopyOnWriteArrayList<>();

    JournalSignalRoutes(EventHub hub, Cluster cluster, FlowSettlements settlements) {
        this.hub = hub;
        this.cluster = cluster;
        this.settlements = settlements;
    }

    @Override
    public void changed(Collection<UUID> ids) {
        // Events journaled here reach this node's streams at once, and other nodes' while they follow any.
        hub.changed(ids);
        cluster.tellEvents();
        watchers.forEach(watcher -> watcher.accept(ids));
    }

    void watch(Consumer<Collection<UUID>> watcher) {
        watchers.add(watcher);
    }

    @Override
    public void settled(Settled settled) {
        settlements.settled(settled);
    }
}
