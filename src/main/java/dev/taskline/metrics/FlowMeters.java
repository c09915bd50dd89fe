package dev.taskline.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Flows as this node saw them: {@code taskline_flows_started_total} (flows it journaled), {@code
 * taskline_flows_finished_total} by final state (flows whose last task's end it committed), {@code
 * taskline_flow_tasks_unblocked_total} (children its commits let go).
 */
public final class FlowMeters {

    private final MeterRegistry registry;
    private final Counter started;
    private final Counter unblocked;
    private final Map<String, Counter> finished = new ConcurrentHashMap<>();

    FlowMeters(MeterRegistry registry) {
        this.registry = registry;
        this.started = Counter.builder("taskline_flows_started")
                .description("Flows journaled by this node")
                .register(registry);
        this.unblocked = Counter.builder("taskline_flow_tasks_unblocked")
                .description("Flow tasks whose parents' ends, committed by this node, let them run")
                .register(registry);
    }

    public void started() {
        started.increment();
    }

    public void unblocked(int n) {
        unblocked.increment(n);
    }

    public void finished(String state) {
        finished.computeIfAbsent(
                        state,
                        s -> Counter.builder("taskline_flows_finished")
                                .description("Flows whose last task's end this node committed, by final state")
                                .tag("state", s)
                                .register(registry))
                .increment();
    }
}
