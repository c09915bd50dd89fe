package dev.taskline.workflow;

import dev.taskline.model.problem.InvalidTaskException;

/**
 * What a flow may not ask beyond what a task may: the rules that come from waiting for parents.
 */
final class FlowRules {

    /** Edges a flow may have, per task it may have: a chord's fan-in is one each. */
    static final int EDGES_PER_TASK = 10;

    private FlowRules() {}

    /**
     * A task that waits for parents has no absolute time: it cannot know when they end. Its delayMs
     * and startWithinMs count from when they let it go; runAt and startBy are refused. And the
     * edges are bounded, since nested groups multiply them (a chain of two groups of 5,000 is 25
     * million).
     */
    static void check(FlowSpec spec, int maxTasks) {
        long edges = 0;
        for (int i = 0; i < spec.tasks().size(); i++) {
            FlowTask task = spec.tasks().get(i);
            edges += task.dependsOn().size();
            if (task.root()) {
                continue;
            }
            String where = "tasks[" + i + "] (key '" + task.key() + "').";
            if (task.submission().runAt() != null) {
                throw new InvalidTaskException(where + "runAt: a task that waits for parents cannot be given a time;"
                        + " give delayMs, counted from when its parents let it run");
            }
            if (task.submission().startBy() != null) {
                throw new InvalidTaskException(where + "startBy: a task that waits for parents cannot be given a"
                        + " deadline time; give startWithinMs, counted from when its parents let it run");
            }
        }
        checkEdges(edges, maxTasks);
    }

    /** The edges a flow of at most {@code maxTasks} tasks may have in all, however its tasks came. */
    static long maxEdges(int maxTasks) {
        return (long) maxTasks * EDGES_PER_TASK;
    }

    static void checkEdges(long edges, int maxTasks) {
        if (edges > maxEdges(maxTasks)) {
            throw new InvalidTaskException(
                    "a flow may have at most " + maxEdges(maxTasks) + " dependsOn edges in all; this one has " + edges);
        }
    }
}
