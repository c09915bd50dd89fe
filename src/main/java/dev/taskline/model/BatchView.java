package dev.taskline.model;

import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** A batch and its tasks, in id order (without their histories). */
public record BatchView(UUID id, int size, Instant createdAt, List<TaskView> tasks) {

    /** How many of its tasks are in each state; every state is present. */
    public Map<TaskState, Integer> counts() {
        Map<TaskState, Integer> counts = new EnumMap<>(TaskState.class);
        for (TaskState state : TaskState.values()) {
            counts.put(state, 0);
        }
        for (TaskView task : tasks) {
            counts.merge(task.state(), 1, Integer::sum);
        }
        return counts;
    }
}
