package dev.taskline.cluster;

import dev.taskline.journal.JournalNodes;
import io.vertx.core.Future;
import java.util.function.Supplier;

/**
 * The work one node alone should do for the whole journal (retention, the deadline sweep, old
 * events, old registry rows) is done by the holder of one lease row, taken and renewed at each
 * heartbeat. A node that dies keeps it to the end of its lease (three heartbeats), then another
 * takes it; a clean stop lets it go at once. A node that cannot renew stops acting on it when its
 * lease would have run out, by its own monotonic time, before anyone else can take it.
 */
public final class Upkeep {

    static final String LEASE = "upkeep";

    private final JournalNodes journal;
    private final String nodeId;
    private final long leaseMs;
    private volatile long heldUntilNanos = System.nanoTime();

    public Upkeep(JournalNodes journal, String nodeId, long leaseMs) {
        this.journal = journal;
        this.nodeId = nodeId;
        this.leaseMs = leaseMs;
    }

    /** Takes or renews the lease; true when this node holds it now. */
    public Future<Boolean> runOnce() {
        long askedAt = System.nanoTime();
        return journal.takeLease(LEASE, nodeId, leaseMs).map(held -> {
            // Counted from when it was asked for: the database's lease began no earlier.
            heldUntilNanos = held ? askedAt + (leaseMs * 1_000_000 * 9 / 10) : System.nanoTime();
            return held;
        });
    }

    /** A clean stop: the lease is let go in the journal; this node stops acting on it now. */
    void release() {
        heldUntilNanos = System.nanoTime();
    }

    /** Whether this node holds the lease now. */
    public boolean holds() {
        return heldUntilNanos - System.nanoTime() > 0;
    }

    /** The pass, run only while this node holds the lease (else a pass that does nothing). */
    public Supplier<Future<?>> only(Supplier<Future<?>> pass) {
        return () -> holds() ? pass.get() : Future.succeededFuture();
    }
}
