package dev.taskline.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.Task;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Random;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Priority order with aging, as pure logic: time is a number the test chooses. */
class PriorityAgingTest {

    private static TaskQueue queue(double agingPerSecond, int capacity) {
        return new TaskQueue(new QueueConfig(
                "q", 10_000, capacity, 30_000, 10_000, 3, 1_000, 300_000, 60_000, agingPerSecond, 100, 0));
    }

    private static Task task(int priority, long dueAtMillis) {
        return Task.builder(UUID.randomUUID(), "q", "sleep")
                .priority(priority)
                .maxAttempts(3)
                .dueAtMillis(dueAtMillis)
                .build();
    }

    @Test
    void without_aging_higher_priority_always_runs_first() {
        TaskQueue q = queue(0, 10);
        Task old = task(0, 0);
        Task fresh = task(5, 1_000_000);
        q.offer(List.of(old, fresh));
        assertEquals(fresh, q.poll());
    }

    @Test
    void a_waiting_task_gains_priority_with_its_age() {
        TaskQueue q = queue(1.0, 10); // one priority point per second waited
        Task old = task(0, 0);
        Task newer = task(5, 4_000); // five points higher, but four seconds younger
        q.offer(List.of(newer, old));
        assertEquals(newer, q.poll(), "effective 5 vs 4 at any common moment");

        TaskQueue q2 = queue(1.0, 10);
        Task younger = task(5, 6_000); // six seconds younger: effective 5 - 6 < 0
        q2.offer(List.of(younger, old));
        assertEquals(old, q2.poll());
    }

    @Test
    void equal_effective_priority_runs_the_one_due_first() {
        TaskQueue q = queue(1.0, 10);
        Task first = task(0, 1_000);
        Task second = task(1, 2_000); // same effective priority, due later
        q.offer(List.of(second, first));
        assertEquals(first, q.poll());
    }

    @Test
    void a_low_priority_task_starts_under_a_constant_high_priority_flood() {
        // Every 100 ms one priority-100 task arrives and one task runs: the queue never empties of
        // high-priority work. With aging of 1 point per second, the priority-0 task must win once it
        // has waited 100 s longer than the fresh arrivals, that is after about 1000 rounds.
        TaskQueue q = queue(1.0, 10_000);
        Task low = task(0, 0);
        q.offer(List.of(low));
        q.offer(List.of(task(100, 0)));
        int rounds = 0;
        Task ran;
        do {
            rounds++;
            q.offer(List.of(task(100, rounds * 100L)));
            ran = q.poll();
        } while (ran != low && rounds < 5_000);
        assertEquals(low, ran, "the low-priority task starved");
        assertTrue(rounds > 900 && rounds <= 1_002, "it ran after " + rounds + " rounds");
    }

    @Test
    void with_no_aging_the_same_flood_starves_the_low_priority_task() {
        TaskQueue q = queue(0, 10_000);
        Task low = task(0, 0);
        q.offer(List.of(low, task(100, 0)));
        for (int round = 1; round <= 3_000; round++) {
            q.offer(List.of(task(100, round * 100L)));
            assertTrue(q.poll() != low);
        }
    }

    @Test
    void the_written_out_order_sorts_as_the_composed_definition_does() {
        // The order as first defined, from Comparator's combinators; TaskQueue.order writes it out.
        for (double aging : new double[] {0, 0.5, 3}) {
            Comparator<Task> definition = Comparator.comparingDouble((Task t) -> Order.agingKey(t, aging))
                    .reversed()
                    .thenComparingLong(Task::dueAtMillis)
                    .thenComparing(Task::id);
            Random random = new Random(42);
            List<Task> tasks = new ArrayList<>();
            for (int i = 0; i < 2_000; i++) {
                // Few distinct values of each key, so that every tie-break is reached.
                tasks.add(Task.builder(new UUID(random.nextInt(3), random.nextInt(50)), "q", "sleep")
                        .priority(random.nextInt(5) - 2)
                        .dueAtMillis(1_000L * random.nextInt(4) + random.nextInt(2))
                        .build());
            }
            List<Task> expected = new ArrayList<>(tasks);
            expected.sort(definition);
            List<Task> actual = new ArrayList<>(tasks);
            actual.sort(Order.of(aging));
            assertEquals(expected, actual, "aging " + aging);
        }
    }
}
