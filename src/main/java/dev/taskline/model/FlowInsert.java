package dev.taskline.model;

import java.util.List;
import java.util.UUID;

/**
 * A flow as it goes into the journal, in one statement: its tasks in the order they were given
 * (ids increasing, so the flow's tasks lie between its first and last id), the roots as admission
 * reserved them (waiting, or claimed at once), the others to wait blocked, and the edges between
 * them.
 */
public record FlowInsert(UUID id, String name, String tenant, List<Node> tasks, List<Edge> edges) {

    /**
     * One task of the flow: {@code join} and {@code parents} (how many it waits for) are null and 0
     * for a root; {@code startWithinMs} is a blocked task's deadline, counted from when it becomes
     * pending (null for none, and for a root, whose deadline is in its insert).
     */
    public record Node(Insert insert, String key, String join, int parents, Long startWithinMs) {

        public boolean root() {
            return parents == 0;
        }
    }

    /** {@code child} waits for {@code parent}. */
    public record Edge(UUID parent, UUID child) {}
}
