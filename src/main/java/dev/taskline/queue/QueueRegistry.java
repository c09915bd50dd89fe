package dev.taskline.queue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.BlockedTasks;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/** The named queues of this node. */
public final class QueueRegistry {

    private final Map<String, TaskQueue> queues;

    public QueueRegistry(Collection<QueueConfig> configs) {
        this(configs, BlockedTasks.NONE);
    }

    /** @param blocked each tenant's blocked flow tasks by queue, which the queues' tenant limits count */
    public QueueRegistry(Collection<QueueConfig> configs, BlockedTasks blocked) {
        Map<String, TaskQueue> byName = new LinkedHashMap<>();
        configs.stream()
                .sorted((a, b) -> a.name().compareTo(b.name()))
                .forEach(config -> byName.put(config.name(), new TaskQueue(config, blocked)));
        this.queues = Collections.unmodifiableMap(byName);
    }

    /** The queue, or null when there is none by that name. */
    public TaskQueue get(String name) {
        return queues.get(name);
    }

    public Collection<TaskQueue> all() {
        return queues.values();
    }
}
