package dev.taskline.model;

import java.time.Instant;

/**
 * A live node as a starting node reads it, to check that they agree on their queues.
 *
 * @param queues its queues' definitions as canonical JSON text (see cluster.QueueDefinitions)
 */
public record LiveNode(
        String id, String address, Instant startedAt, String queues, String queuesHash, long configEpoch) {}
