package dev.taskline.cluster;

import dev.taskline.journal.JournalNodes;
import dev.taskline.model.LiveNode;
import dev.taskline.model.NodeEntry;
import dev.taskline.model.NodeRecord;
import io.vertx.core.Future;
import java.util.List;
import java.util.function.IntSupplier;
import java.util.logging.Logger;

/**
 * This node in the journal's registry: it registers at start (refusing to, when a live node defines
 * a shared queue otherwise), heart-beats, and leaves on a clean stop. A row lives three heartbeats,
 * so a killed node is listed gone within that; gone nodes stay listed for {@value #GONE_LISTED_MS}
 * ms, then the upkeep deletes them.
 */
public final class NodePresence {

    private static final Logger LOG = Logger.getLogger(NodePresence.class.getName());
    static final long GONE_LISTED_MS = 3_600_000;

    private final JournalNodes journal;
    private final String nodeId;
    private final String version;
    private final QueueDefinitions definitions;
    private final boolean takeOver;
    private final long heartbeatMs;
    private final IntSupplier streams;
    private final IntSupplier connections;
    private volatile String address;
    private volatile long epoch = -1;
    private volatile boolean left;
    /** Live nodes at the last heartbeat, this one among them; assumed more than one until read. */
    private volatile int live = 2;
    /** Whether another node had streams open at the last heartbeat (or said since that it opened one). */
    private volatile boolean followed = true;

    /**
     * @param takeOver  start even when live nodes define shared queues otherwise: this node's
     *                  definitions become the newest (a rolling change; see the README)
     * @param streams   the streams open on this node now
     * @param connections its journal connections open now, each counted in PostgreSQL's max_connections
     */
    public NodePresence(
            JournalNodes journal,
            String nodeId,
            String version,
            QueueDefinitions definitions,
            boolean takeOver,
            long heartbeatMs,
            IntSupplier streams,
            IntSupplier connections) {
        this.journal = journal;
        this.nodeId = nodeId;
        this.version = version;
        this.definitions = definitions;
        this.takeOver = takeOver;
        this.heartbeatMs = heartbeatMs;
        this.streams = streams;
        this.connections = connections;
    }

    /**
     * The config epoch this node takes among {@code live}: with {@code takeOver}, one past the newest;
     * else the newest, once its definitions agree with every live node of that epoch (older ones are
     * being rolled out and are not asked). Throws {@link ConfigConflictException} naming the first
     * queue and field that differ, and the node.
     */
    static long epochAmong(List<LiveNode> live, QueueDefinitions mine, boolean takeOver) {
        long newest = live.stream().mapToLong(LiveNode::configEpoch).max().orElse(0);
        if (takeOver) {
            return live.isEmpty() ? 0 : newest + 1;
        }
        for (LiveNode other : live) {
            if (other.configEpoch() != newest || other.queuesHash().equals(mine.hash())) {
                continue;
            }
            List<QueueDefinitions.Difference> differences = mine.differences(QueueDefinitions.parse(other.queues()));
            if (!differences.isEmpty()) {
                throw new ConfigConflictException(differences.get(0), other);
            }
        }
        return newest;
    }

    /** Registers this node, whose API answers at {@code address}; fails with a conflict, or when the journal does. */
    public Future<Void> register(String address) {
        this.address = address;
        return journal.register(entry(), expiresMs(), live -> epochAmong(live, definitions, takeOver))
                .map(taken -> {
                    epoch = taken;
                    if (takeOver) {
                        LOG.warning(nodeId + " took the queue definitions over (config epoch " + taken + ")");
                    }
                    return null;
                });
    }

    /** The API's address, once it listens (a random port is known only then). */
    public Future<Void> address(String address) {
        this.address = address;
        return journal.address(nodeId, address);
    }

    /**
     * One heartbeat. A row found not live (its life ran out in a stall or an outage, or it was
     * deleted) is registered again, through the same check as at start against the nodes of this
     * node's epoch or newer: a node started meanwhile with another definition is not joined silently.
     * Refused, this node stays unlisted (and logs why at each heartbeat) until the two agree.
     */
    public Future<Void> runOnce() {
        if (left || epoch < 0) {
            return Future.succeededFuture();
        }
        return journal.heartbeat(nodeId, expiresMs(), streams.getAsInt(), connections.getAsInt())
                .compose(beat -> {
                    if (beat != null) {
                        live = beat.live();
                        followed = beat.followed();
                        return Future.succeededFuture();
                    }
                    if (left) {
                        return Future.succeededFuture();
                    }
                    long kept = epoch;
                    return journal.register(
                                    entry(),
                                    expiresMs(),
                                    nodes -> Math.max(
                                            kept,
                                            epochAmong(
                                                    nodes.stream()
                                                            .filter(n -> n.configEpoch() >= kept)
                                                            .toList(),
                                                    definitions,
                                                    false)))
                            .<Void>map(taken -> {
                                epoch = taken;
                                LOG.warning(nodeId
                                        + " was not live in the registry (a stall, or the journal away for longer than"
                                        + " three heartbeats): registered again");
                                return null;
                            })
                            .onFailure(e -> LOG.severe(nodeId + " cannot register again: " + e.getMessage()));
                });
    }

    /** A clean stop: listed as gone at once, leases let go; no heartbeat after it writes anything. */
    public Future<Void> leave() {
        left = true;
        return epoch < 0 ? Future.succeededFuture() : journal.gone(nodeId);
    }

    /** Live nodes, then those gone within the last hour. */
    public Future<List<NodeRecord>> list() {
        return journal.list(GONE_LISTED_MS);
    }

    /** Deletes the rows of nodes gone more than an hour ago: upkeep, for one node at a time. */
    public Future<Integer> forgetOld() {
        return journal.forget(GONE_LISTED_MS);
    }

    /** Whether this node was alone on the journal at its last heartbeat. */
    public boolean alone() {
        return live <= 1;
    }

    /** Whether another node follows tasks in streams: this node's task events are then worth announcing. */
    public boolean followed() {
        return followed && live > 1;
    }

    /** Another node said it opened a stream: announce task events until a heartbeat says otherwise. */
    void joinedNow() {
        live = Math.max(live, 2);
    }

    void followedNow() {
        followed = true;
        live = Math.max(live, 2);
    }

    public String nodeId() {
        return nodeId;
    }

    private long expiresMs() {
        return 3 * heartbeatMs;
    }

    private NodeEntry entry() {
        return new NodeEntry(nodeId, version, address, definitions.text(), definitions.hash());
    }
}
