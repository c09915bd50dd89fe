package dev.taskline.model;

import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * What a statement that ended flow tasks settled in their flows, in the same transaction: children
 * that became pending (for the node to hold at once, rather than wait for a page-in), children it
 * cancelled because their join can no longer be met, and flows that ended, each with its final
 * state; and, for ready children of few and light parents, what those parents ended with (the
 * journal hands it over so that the child starts without reading it).
 */
public record Settled(
        List<Task> ready, List<UUID> cancelled, List<FlowEnd> flowsEnded, Map<UUID, Parents> readyParents) {

    public static final Settled NOTHING = new Settled(List.of(), List.of(), List.of(), Map.of());

    /** A flow with nothing left to run, and how it ended: succeeded, failed or cancelled. */
    public record FlowEnd(UUID flowId, String state) {}

    public boolean empty() {
        return ready.isEmpty() && cancelled.isEmpty() && flowsEnded.isEmpty();
    }
}
