package dev.taskline.cluster;

import dev.taskline.config.TasklineConfig;
import dev.taskline.journal.JournalNodes;
import dev.taskline.journal.Servers;
import dev.taskline.model.NodeRecord;
import dev.taskline.support.Coalesced;
import dev.taskline.support.Periodic;
import io.vertx.core.Future;
import java.util.List;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Consumer;
import java.util.function.IntSupplier;
import java.util.function.Supplier;

/**
 * This node among the others on its journal: its row in the registry, the listening connection and
 * what each channel asks of the node, and the upkeep lease. What the others tell goes up through one
 * port ({@link ClusterSignals}); the cluster knows none of the parts it wakes.
 */
public final class Cluster {

    /** Work became due on a queue (payload: the queue). */
    public static final String DUE = "taskline_due";
    /** A keyed task of a queue left running: room under its key (payload: the queue). */
    public static final String KEYS = "taskline_keys";
    /** A queue was paused or resumed. */
    public static final String CONTROLS = "taskline_controls";
    /** A key was issued or revoked, or a session signed out. */
    public static final String AUTH = "taskline_auth";
    /** A schedule was made, changed or deleted, or one of its ticks decided. */
    public static final String SCHEDULES = "taskline_schedules";
    /** A task's state or progress changed, while some node follows tasks. */
    public static final String EVENTS = "taskline_events";
    /** A node joined (payload "joined"), or opened its first stream ("following"). */
    public static final String NODES = "taskline_nodes";

    private static final String JOINED = "joined";
    private static final String FOLLOWING = "following";

    private final TasklineConfig.Cluster config;
    private final JournalNodes journal;
    private final Map<String, Coalesced> told = new ConcurrentHashMap<>();
    private final NodePresence presence;
    private final Upkeep upkeep;
    private final Listener listener;
    private final IntSupplier connections;

    /**
     * @param streams the event streams open on this node now
     * @param pooled  the connections its pools hold open now; the listening connection is the cluster's own
     */
    public Cluster(
            TasklineConfig.Cluster config,
            JournalNodes journal,
            Servers listenAt,
            String nodeId,
            String version,
            QueueDefinitions definitions,
            IntSupplier streams,
            IntSupplier pooled) {
        this.config = config;
        this.journal = journal;
        Listener listening = new Listener(listenAt);
        this.listener = listening;
        this.connections = () -> pooled.getAsInt() + (listening.listening() ? 1 : 0);
        this.presence = new NodePresence(
                journal,
                nodeId,
                version,
                definitions,
                config.takeOverConfig(),
                config.heartbeatMs(),
                streams,
                connections);
        this.upkeep = new Upkeep(journal, nodeId, 3 * config.heartbeatMs());
        listenOwn();
    }

    /** What the cluster itself hears: who follows tasks. */
    private void listenOwn() {
        listener.on(NODES, fromOthers(what -> {
            if (FOLLOWING.equals(what)) {
                presence.followedNow();
            } else if (JOINED.equals(what)) {
                presence.joinedNow();
            }
        }));
    }

    /**
     * Who hears what the other nodes tell: given once, before the listening connection is deployed.
     * Each channel goes to its one method; the passes run one at a time, a burst folded into one
     * more.
     */
    public void signals(ClusterSignals to) {
        listener.on(DUE, fromOthers(to::due));
        listener.on(KEYS, fromOthers(to::keyFreed));
        listener.on(SCHEDULES, fromOthers(ignored -> to.schedulesChanged()));
        listener.on(CONTROLS, fromOthers(new Coalesced("reading the queue switches", to::readSwitches)));
        listener.on(AUTH, fromOthers(new Coalesced("reading the keys", to::readKeys)));
        listener.on(EVENTS, fromOthers(new Coalesced("catching streams up", to::catchStreamsUp)));
    }

    /**
     * What a node sends is "sender|payload"; PostgreSQL delivers a notification to the sender's own
     * listening session too, which has nothing to learn from it. Triggers' payloads carry no sender.
     */
    private Consumer<String> fromOthers(Consumer<String> handler) {
        String own = presence.nodeId() + "|";
        return payload -> {
            if (payload == null) {
                handler.accept(null);
            } else if (!payload.startsWith(own)) {
                int bar = payload.indexOf('|');
                handler.accept(bar < 0 ? payload : payload.substring(bar + 1));
            }
        };
    }

    /**
     * Registers the node (refused, with {@link ConfigConflictException}, when a live node defines a
     * shared queue otherwise) and takes the upkeep lease if free. Before the node takes any work.
     */
    public Future<Void> join(String address) {
        // A heartbeat at once: until one, the node does not know whether it is alone. The others are
        // told that it is not now, each of them, before their next heartbeat would say so.
        return presence.register(address).compose(v -> runOnce()).compose(v -> say(NODES, JOINED));
    }

    /** Whether the listening connection is up and subscribed (false while it polls behind a pooler). */
    public boolean listening() {
        return listener.listening();
    }

    /** The journal connections this node holds open now: its pools' and its listening one. */
    public int connections() {
        return connections.getAsInt();
    }

    /** The listening connection, to deploy once every channel has its handler. */
    public Listener listener() {
        return listener;
    }

    /** The heartbeat and the upkeep lease's renewal, as one timed pass. */
    public Periodic heartbeats() {
        return new Periodic("heart-beating in the node registry", config.heartbeatMs(), this::runOnce);
    }

    /** One heartbeat and lease renewal: for tests, and when this node begins to follow tasks. */
    public Future<Void> runOnce() {
        return presence.runOnce().compose(v -> upkeep.runOnce()).mapEmpty();
    }

    /** A pass that notifications make urgent: its timer runs every {@code intervalMs}, every fallbackMs while listening. */
    public Periodic fallback(String what, long intervalMs, Supplier<Future<?>> pass) {
        return new Periodic(what, intervalMs, pass, listener::listening, config.fallbackMs());
    }

    /** A pass for one node at a time: it runs (on its timer) only on the upkeep lease's holder. */
    public Periodic upkeep(String what, long intervalMs, Supplier<Future<?>> pass) {
        return new Periodic(what, intervalMs, upkeep.only(pass));
    }

    /**
     * Tells the other nodes that due work of {@code queue} waits here that this node cannot start now
     * (a submission, a retry or delay come due, a flow child made ready, while its slots are busy),
     * unless it is alone. Not a change of the journal, so not a trigger's: the task is pending there
     * already; what is new is that its holder cannot start it.
     */
    public void tellDue(String queue) {
        if (!presence.alone()) {
            tell(DUE, queue);
        }
    }

    /** Tells the other nodes that a task of a key of {@code queue} ended here: room under its key. */
    public void tellKeyFreed(String queue) {
        if (!presence.alone()) {
            tell(KEYS, queue);
        }
    }

    /** Task events were journaled here: told to the others while one follows tasks in streams. */
    public void tellEvents() {
        if (presence.followed()) {
            tell(EVENTS, "");
        }
    }

    /**
     * This node began to follow tasks: its registry row says so at once, and the others, told, announce
     * their task events from now on.
     */
    public Future<Void> following() {
        return runOnce().compose(v -> say(NODES, FOLLOWING));
    }

    /**
     * One notification in flight per channel and payload: a busy node writing a stream of statements
     * sends one more after the one out, not one per statement. Sent after the statement committed,
     * so only what committed is told.
     */
    private void tell(String channel, String payload) {
        told.computeIfAbsent(
                        channel + "/" + payload,
                        k -> new Coalesced("telling the others on " + channel, () -> say(channel, payload)))
                .accept(payload);
    }

    /** Sends {@code payload} on {@code channel} as this node's: "sender|payload" (see fromOthers). */
    private Future<Void> say(String channel, String payload) {
        return journal.notify(channel, presence.nodeId() + "|" + payload);
    }

    public boolean holdsUpkeep() {
        return upkeep.holds();
    }

    /** Live nodes, then those gone within the last hour. */
    public Future<List<NodeRecord>> nodes() {
        return presence.list();
    }

    /** Deletes registry rows of nodes long gone (an upkeep pass). */
    public Future<Integer> forgetOld() {
        return presence.forgetOld();
    }

    /** A clean stop: listed as gone, the upkeep lease let go. */
    public Future<Void> leave() {
        upkeep.release();
        return presence.leave();
    }

    /** Sets the address the registry shows, once the API listens. */
    public Future<Void> address(String address) {
        return presence.address(address);
    }
}
