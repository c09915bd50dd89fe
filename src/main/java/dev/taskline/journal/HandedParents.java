package dev.taskline.journal;

import dev.taskline.model.Parents;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.UUID;

/**
 * The parents' results that flow_settle handed over with the children it made ready (migration
 * 000026), kept for each child's first start on this node, so that it starts without reading them.
 * An entry counts only for the version the child was made ready at: a later readiness (a retried
 * flow) or a later attempt reads the journal. Bounded: a child that starts elsewhere, or never, is
 * forgotten once newer ones push it out, and then read from the journal like any other.
 */
final class HandedParents {

    /**
     * Each at most 2,048 bytes of values (flow_settle's bound) and 8 keys of at most 128 characters,
     * twice (values and states): some 4.5 KB, 20 MB at the most.
     */
    static final int MAX_ENTRIES = 4_096;

    private record Handed(long version, Parents parents) {}

    private final Map<UUID, Handed> entries = new LinkedHashMap<>(256, 0.75f, false) {
        @Override
        protected boolean removeEldestEntry(Map.Entry<UUID, Handed> eldest) {
            return size() > MAX_ENTRIES;
        }
    };

    /** A child made ready at {@code version} in a write that committed, with its parents (null: none handed). */
    synchronized void ready(UUID child, long version, Parents parents) {
        if (parents == null) {
            entries.remove(child);
        } else {
            entries.put(child, new Handed(version, parents));
        }
    }

    /** The parents handed over for {@code child} made ready at {@code version}, once; null when none are. */
    synchronized Parents take(UUID child, long version) {
        Handed handed = entries.remove(child);
        return handed != null && handed.version == version ? handed.parents : null;
    }
}
