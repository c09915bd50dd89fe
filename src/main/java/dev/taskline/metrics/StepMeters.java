package dev.taskline.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import io.micrometer.core.instrument.Timer;
import java.time.Duration;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * Durable steps as this node saw them: {@code taskline_steps_completed_total} (steps its attempts
 * and remote workers journaled first), {@code taskline_tasks_suspended_total} by kind (sleep,
 * signal, event), {@code taskline_signals_total} (signals kept), {@code taskline_events_total} and
 * {@code taskline_event_deliveries_total} (events received, and the waiting tasks they woke), and
 * {@code taskline_wake_lateness_seconds} (a sleep's or timeout's end to the waker handing the task
 * to its queue: how late a wake-up starts; the queue's own wait follows).
 */
public final class StepMeters {

    private final MeterRegistry registry;
    private final Counter completed;
    private final Counter signals;
    private final Counter events;
    private final Counter deliveries;
    private final Timer lateness;
    private final Map<String, Counter> suspended = new ConcurrentHashMap<>();

    StepMeters(MeterRegistry registry) {
        this.registry = registry;
        this.completed = Counter.builder("taskline_steps_completed")
                .description("Durable steps journaled through this node")
                .register(registry);
        this.signals = Counter.builder("taskline_signals")
                .description("Signals kept for tasks")
                .register(registry);
        this.events = Counter.builder("taskline_events")
                .description("Events received (each id once)")
                .register(registry);
        this.deliveries = Counter.builder("taskline_event_deliveries")
                .description("Waiting tasks an event woke")
                .register(registry);
        this.lateness = Timer.builder("taskline_wake_lateness")
                .description("From a suspended task's wake time to the waker handing it to its queue")
                .serviceLevelObjectives(Buckets.LATENCY)
                .register(registry);
    }

    public void completed() {
        completed.increment();
    }

    public void suspended(String kind) {
        suspended
                .computeIfAbsent(
                        kind,
                        k -> Counter.builder("taskline_tasks_suspended")
                                .description("Attempts ended suspended, by what they wait for")
                                .tag("kind", k)
                                .register(registry))
                .increment();
    }

    public void signal() {
        signals.increment();
    }

    public void event(int delivered) {
        events.increment();
        deliveries.increment(delivered);
    }

    public void woke(long lateMillis) {
        lateness.record(Duration.ofMillis(Math.max(0, lateMillis)));
    }
}
