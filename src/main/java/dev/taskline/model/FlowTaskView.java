package dev.taskline.model;

import java.util.List;
import java.util.UUID;

/**
 * One task of a flow as its view shows it: where it stands in the graph and how it ended; its
 * result and error weigh {@code resultBytes} and {@code errorBytes} as JSON text, and are null
 * when the view left them out.
 */
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
        String tenant,
        long resultBytes,
        long errorBytes) {

    /** Whether the result or error was left out of this view (too heavy): the task's own read shows it. */
    public boolean leftOut() {
        return (result == null && resultBytes > 0) || (error == null && errorBytes > 0);
    }
}
