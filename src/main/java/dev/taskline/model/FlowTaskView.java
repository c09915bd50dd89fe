package dev.taskline.model;

import java.util.List;
import java.util.UUID;

/** One task of a flow as its view shows it: where it stands in the graph and how it ended. */
public record FlowTaskView(
        String key,
        UUID id,
        String queue,
        String type,
        TaskState state,
        String join,
        List<String> dependsOn,
        int attempt,
        Object result,
        Object error,
        String tenant) {}
