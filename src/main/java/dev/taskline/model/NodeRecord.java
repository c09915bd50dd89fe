package dev.taskline.model;

import java.time.Instant;
import java.util.List;

/**
 * A node as the registry lists it (migration 000020).
 *
 * @param address    where its API listens, as it said at start
 * @param seenAt     its last heartbeat, by the database's clock
 * @param goneAt     when it stopped cleanly; null for a live node, and for one that went silent
 * @param queuesHash the hash of its queues' definitions: nodes that agree show the same
 * @param live       whether its row is live now (not stopped, heartbeat not expired)
 * @param streams    the event streams open on it at its last heartbeat
 * @param connections its journal connections open at its last heartbeat: its pools' and its listening one
 * @param leases     the upkeep leases it holds (see cluster.Upkeep)
 * @param readAt     the database's time of the reading, against which {@code seenAt} is to be read
 */
public record NodeRecord(
        String id,
        String version,
        String address,
        Instant startedAt,
        Instant seenAt,
        Instant expiresAt,
        Instant goneAt,
        String queuesHash,
        long configEpoch,
        int streams,
        int connections,
        boolean live,
        List<String> leases,
        Instant readAt) {

    public NodeRecord {
        leases = List.copyOf(leases);
    }
}
