package dev.taskline.model;

import java.util.List;
import java.util.UUID;

/**
 * Tasks a running flow task adds to its flow, committed with its success and fenced by its lease
 * like it: each waits for the spawner (and for the other spawned tasks its {@code dependsOn}
 * names), and the spawner's own dependents wait for the {@code tails} too (those no other spawned
 * task depends on), so a task that reads a list can fan out over it and the flow's next step
 * still waits for all of it. {@code delaysMs}: each task's delay, counted from when it may run.
 */
public record Spawn(
        UUID flowId,
        UUID spawner,
        List<FlowInsert.Node> tasks,
        List<Long> delaysMs,
        List<FlowInsert.Edge> edges,
        List<UUID> tails,
        Budget budget) {

    /**
     * What the whole flow may come to, however its tasks came (submitted, spawned, spawned by the
     * spawned): tasks, edges, and parents of any one task. The journal holds the spawn to it in the
     * transaction that writes it.
     */
    public record Budget(int maxTasks, long maxEdges, int maxParents) {}

    public List<String> keys() {
        return tasks.stream().map(FlowInsert.Node::key).toList();
    }
}
