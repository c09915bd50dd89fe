package dev.taskline.metrics;

import io.micrometer.core.instrument.Counter;
import io.micrometer.core.instrument.MeterRegistry;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;

/**
 * What this node's scheduler did with each schedule's ticks: {@code taskline_schedule_ticks_total}
 * by schedule and outcome: {@code fired} (this node inserted the tick's task), {@code skipped} (it
 * recorded the tick skipped: overlap, a full queue, a refusal, or missed, counted tick by tick) and
 * {@code lost} (another node had decided it: the race the journal's key settles, one per tick and
 * losing node). Across nodes, fired + skipped is the ticks decided; lost says how many nodes were
 * there.
 */
public final class ScheduleMeters {

    private final MeterRegistry registry;
    private final Map<String, Counter> counters = new ConcurrentHashMap<>();

    ScheduleMeters(MeterRegistry registry) {
        this.registry = registry;
    }

    public void fired(String schedule) {
        counter(schedule, "fired").increment();
    }

    public void skipped(String schedule, long ticks) {
        counter(schedule, "skipped").increment(ticks);
    }

    public void lost(String schedule) {
        counter(schedule, "lost").increment();
    }

    /** Drops the meters of schedules that are gone: what is held follows the schedules there are. */
    public void keepOnly(java.util.Set<String> schedules) {
        counters.entrySet().removeIf(entry -> {
            String schedule = entry.getKey().substring(0, entry.getKey().indexOf('\u0000'));
            if (schedules.contains(schedule)) {
                return false;
            }
            registry.remove(entry.getValue());
            return true;
        });
    }

    /** How many meters are held. */
    int held() {
        return counters.size();
    }

    private Counter counter(String schedule, String outcome) {
        return counters.computeIfAbsent(
                schedule + '\u0000' + outcome,
                k -> Counter.builder("taskline_schedule_ticks")
                        .description(
                                "Ticks of a schedule this node decided (fired, skipped) or found decided by another (lost)")
                        .tag("schedule", schedule)
                        .tag("outcome", outcome)
                        .register(registry));
    }
}
