package dev.taskline.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.testing.MutableClock;
import dev.taskline.worker.RemoteWorkers.Worker;
import java.time.Duration;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

class WorkerRegistryTest {

    @Test
    void a_worker_is_listed_once_with_its_last_queue_and_time_the_least_recent_first() {
        MutableClock clock = new MutableClock(Instant.parse("2026-12-02T10:00:00Z"));
        WorkerRegistry registry = new WorkerRegistry(clock);
        registry.saw(null, "w1", "a");
        clock.advance(Duration.ofSeconds(1));
        registry.saw(null, "w2", "a");
        clock.advance(Duration.ofSeconds(1));
        registry.saw(null, "w1", "b");
        List<Worker> workers = registry.workers(Map.of("w1", 3));
        assertEquals(
                List.of(
                        new Worker("w2", "a", 0, Instant.parse("2026-12-02T10:00:01Z"), null),
                        new Worker("w1", "b", 3, Instant.parse("2026-12-02T10:00:02Z"), null)),
                workers);
    }

    @Test
    void past_ten_thousand_names_the_one_heard_from_longest_ago_is_forgotten() {
        WorkerRegistry registry = new WorkerRegistry(new MutableClock());
        for (int i = 0; i <= 10_000; i++) {
            registry.saw(null, "w" + i, "q");
        }
        List<Worker> workers = registry.workers(Map.of());
        assertEquals(10_000, workers.size());
        assertEquals("w1", workers.get(0).name());
    }

    @Test
    void a_tenant_claiming_under_ever_new_names_forgets_only_its_own() {
        MutableClock clock = new MutableClock(Instant.parse("2026-12-02T10:00:00Z"));
        WorkerRegistry registry = new WorkerRegistry(clock);
        registry.saw("globex", "steady", "q");
        clock.advance(Duration.ofMillis(1));
        registry.saw(null, "untenanted", "q");
        for (int i = 0; i < 50_000; i++) {
            clock.advance(Duration.ofMillis(1));
            registry.saw("acme", "name-" + i, "q");
        }
        List<Worker> workers = registry.workers(Map.of());
        assertEquals(10_000, workers.size());
        assertEquals("steady", workers.get(0).name(), "another tenant's worker is still listed");
        assertEquals("globex", workers.get(0).tenant());
        assertEquals("untenanted", workers.get(1).name());
        assertEquals("name-49999", workers.get(workers.size() - 1).name());
    }
}
