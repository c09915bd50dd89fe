package dev.taskline.queue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.BlockedTasks;
import java.util.Collection;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * The named queues of this node. The wiring holds it whole; each other part is handed it as the
 * {@link NodeQueues} of the one face it uses.
 */
public final class QueueRegistry implements NodeQueues<TaskQueue> {

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

    /**
     * Gives every queue the port it signals through, once, before anything is admitted: the one place
     * where the queues learn who listens (an architecture test holds the wiring to it).
     */
    public void signals(QueueSignals signals) {
        for (TaskQueue queue : queues.values()) {
            queue.signals(signals);
        }
    }

    @Override
    public TaskQueue get(String name) {
        return queues.get(name);
    }

    @Override
    public Collection<TaskQueue> all() {
        return queues.values();
    }
}
