package dev.taskline.workflow;

import dev.taskline.admission.Submission;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Objects;

/**
 * One task of a flow: its key (unique in the flow), what to submit, the keys of the tasks it
 * waits for, and how it waits for them. {@code dependsOn} is empty for a root, never null, and
 * holds each key once in the order first given, so that a repeated key is not a second edge.
 */
public record FlowTask(String key, Submission submission, List<String> dependsOn, Join join) {

    public FlowTask {
        Objects.requireNonNull(key, "key");
        Objects.requireNonNull(submission, "submission");
        Objects.requireNonNull(join, "join");
        dependsOn = dependsOn == null ? List.of() : List.copyOf(new LinkedHashSet<>(dependsOn));
    }

    public boolean root() {
        return dependsOn.isEmpty();
    }
}
