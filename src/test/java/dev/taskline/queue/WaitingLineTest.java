package dev.taskline.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.Task;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Random;
import java.util.Set;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** The order of waiting tasks across tenants, as pure logic. */
class WaitingLineTest {

    private static long seq;

    private static Task task(String tenant, int priority) {
        seq++;
        return Task.builder(new UUID(0, seq), "q", "sleep")
                .tenant(tenant)
                .priority(priority)
                .dueAtMillis(seq)
                .build();
    }

    private static WaitingLine fair(Map<String, Integer> weights) {
        return new WaitingLine(Order.of(0), true, t -> weights.getOrDefault(t, 1));
    }

    private static List<String> tenants(WaitingLine line, int n) {
        List<String> order = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            Task t = line.poll();
            order.add(t.tenant() == null ? "-" : t.tenant());
        }
        return order;
    }

    @Test
    void a_flood_delays_another_tenants_task_by_one_turn_not_by_its_backlog() {
        WaitingLine line = fair(Map.of());
        for (int i = 0; i < 1000; i++) {
            line.add(task("flood", 0));
        }
        line.poll();
        line.add(task("quiet", 0));
        assertEquals(
                List.of("flood", "quiet", "flood", "flood"),
                tenants(line, 4),
                "the flood's turn ends after one task: the quiet tenant's comes next");
        assertEquals(996, line.size());
    }

    @Test
    void weights_are_tasks_per_turn_and_tasks_without_a_tenant_take_turns_too() {
        WaitingLine line = fair(Map.of("gold", 3));
        for (int i = 0; i < 6; i++) {
            line.add(task("gold", 0));
            line.add(task("basic", 0));
            line.add(task(null, 0));
        }
        assertEquals(
                List.of("gold", "gold", "gold", "basic", "-", "gold", "gold", "gold", "basic", "-", "basic", "-"),
                tenants(line, 12));
    }

    @Test
    void priority_orders_within_a_tenant_and_not_across_tenants() {
        WaitingLine line = fair(Map.of());
        Task low = task("a", 0);
        Task high = task("a", 9);
        Task other = task("b", -5);
        line.add(low);
        line.add(other);
        line.add(high);
        assertEquals(List.of(high, other, low), List.of(line.poll(), line.poll(), line.poll()));
        assertNull(line.poll());
    }

    @Test
    void unfair_is_the_queue_order_alone() {
        WaitingLine line = new WaitingLine(Order.of(0), false, t -> 1);
        for (int i = 0; i < 3; i++) {
            line.add(task("flood", 0));
        }
        line.add(task("quiet", 0));
        assertEquals(List.of("flood", "flood", "flood", "quiet"), tenants(line, 4));
    }

    @Test
    void removals_keep_the_size_and_the_turns_right_whatever_is_removed() {
        Random random = new Random(7);
        WaitingLine line = fair(Map.of("b", 2));
        Set<Task> held = new HashSet<>();
        String[] tenants = {"a", "b", "c", null};
        for (int round = 0; round < 2_000; round++) {
            int op = random.nextInt(4);
            if (op <= 1) {
                Task t = task(tenants[random.nextInt(4)], random.nextInt(3));
                line.add(t);
                held.add(t);
            } else if (op == 2 && !held.isEmpty()) {
                Task t = line.poll();
                assertTrue(held.remove(t), "polled a task it held");
            } else if (!held.isEmpty()) {
                Task victim = held.iterator().next();
                assertTrue(random.nextBoolean() ? line.remove(victim) : line.removeIf(x -> x == victim));
                held.remove(victim);
            }
            assertEquals(held.size(), line.size());
            Set<Task> seen = new HashSet<>();
            line.forEach(seen::add);
            assertEquals(held, seen);
        }
        while (line.poll() != null) {
            // drains to empty without a stale turn
        }
        assertEquals(0, line.size());
    }

    @Test
    void the_tasks_counted_before_a_new_one_are_those_polled_before_it_whatever_the_turns() {
        Random random = new Random(11);
        String[] tenants = {"a", "b", "c", null};
        Map<String, Integer> weights = Map.of("b", 3, "c", 2);
        for (boolean isFair : new boolean[] {true, false}) {
            for (int round = 0; round < 500; round++) {
                // Two lines put through the same history: one is asked, the other is polled to check.
                WaitingLine asked = isFair ? fair(weights) : new WaitingLine(Order.of(0), false, t -> 1);
                WaitingLine polled = isFair ? fair(weights) : new WaitingLine(Order.of(0), false, t -> 1);
                int steps = random.nextInt(60);
                for (int step = 0; step < steps; step++) {
                    if (random.nextInt(3) > 0 || asked.isEmpty()) {
                        Task t = task(tenants[random.nextInt(4)], random.nextInt(3));
                        asked.add(t);
                        polled.add(t);
                    } else {
                        assertEquals(asked.poll(), polled.poll());
                    }
                }
                String tenant = tenants[random.nextInt(4)];
                int priority = random.nextInt(3);
                List<Task> peers = new ArrayList<>();
                for (int i = random.nextInt(4); i > 0; i--) {
                    peers.add(task(tenant, priority)); // due before the probe: ahead of it
                }
                Task probe = task(tenant, priority);
                int counted = asked.startsBefore(probe, new int[] {peers.size()})[0];

                peers.forEach(polled::add);
                polled.add(probe);
                int before = 0;
                while (polled.poll() != probe) {
                    before++;
                }
                assertEquals(before, counted, (isFair ? "fair" : "not fair") + ", round " + round);
            }
        }
    }

    @Test
    void a_quiet_tenants_new_task_counts_one_turn_of_a_flood_not_the_flood() {
        WaitingLine line = fair(Map.of());
        for (int i = 0; i < 1000; i++) {
            line.add(task("flood", 0));
        }
        assertEquals(1, line.startsBefore(task("quiet", 0), new int[] {0})[0], "the flood's current turn");
        assertEquals(1000, line.startsBefore(task("flood", 0), new int[] {0})[0]);
        assertEquals(3, line.startsBefore(task("quiet", 0), new int[] {1})[0], "behind one of its own: two turns each");
    }

    @Test
    void a_worker_that_runs_most_tasks_takes_them_in_turn_and_those_passed_over_keep_their_places() {
        WaitingLine line = new WaitingLine(Order.of(0), false, t -> 1);
        List<Task> all = new ArrayList<>();
        for (int i = 0; i < 20; i++) {
            Task t = task(i % 5 == 0 ? "other" : "mine", 20 - i);
            all.add(t);
            line.add(t);
        }
        List<Task> taken = line.takeBest(6, t -> "mine".equals(t.tenant()));
        List<Task> expected =
                all.stream().filter(t -> "mine".equals(t.tenant())).limit(6).toList();
        assertEquals(expected, taken, "best first: the highest priorities that match");
        assertEquals(14, line.size());
        List<Task> rest = new ArrayList<>();
        for (Task t; (t = line.poll()) != null; ) {
            rest.add(t);
        }
        List<Task> left = new ArrayList<>(all);
        left.removeAll(taken);
        assertEquals(left, rest, "the others in their order, those passed over among them");
    }

    @Test
    void a_worker_that_runs_few_of_the_tasks_waiting_gets_the_best_of_them_from_deep_in_line() {
        WaitingLine line = new WaitingLine(Order.of(0), false, t -> 1);
        List<Task> wanted = new ArrayList<>();
        for (int i = 0; i < 5000; i++) {
            Task t = task(i % 1000 == 999 ? "rare" : "common", 0);
            if ("rare".equals(t.tenant())) {
                wanted.add(t);
            }
            line.add(t);
        }
        assertEquals(wanted.subList(0, 3), line.takeBest(3, t -> "rare".equals(t.tenant())));
        assertEquals(4997, line.size());
        assertEquals(wanted.subList(3, 5), line.takeBest(10, t -> "rare".equals(t.tenant())));
        assertEquals(0, line.takeBest(10, t -> "rare".equals(t.tenant())).size());
        assertEquals(4995, line.size());
    }

    @Test
    void the_first_due_is_that_of_the_tasks_still_in_line_whichever_way_the_others_left() {
        Random random = new Random(7);
        for (boolean fairness : new boolean[] {true, false}) {
            WaitingLine line = new WaitingLine(Order.of(0), fairness, t -> 1);
            List<Task> in = new ArrayList<>();
            for (int step = 0; step < 2000; step++) {
                int what = random.nextInt(6);
                if (what < 3 || in.isEmpty()) {
                    Task t = Task.builder(new UUID(1, step), "q", "sleep")
                            .tenant("t" + random.nextInt(3))
                            .priority(random.nextInt(3))
                            .dueAtMillis(random.nextInt(50))
                            .build();
                    line.add(t);
                    in.add(t);
                } else if (what == 3) {
                    in.remove(line.poll());
                } else if (what == 4) {
                    Task t = in.get(random.nextInt(in.size()));
                    assertTrue(line.remove(t));
                    in.remove(t);
                } else {
                    int tenant = random.nextInt(3);
                    List<Task> taken = line.takeBest(2, t -> t.tenant().equals("t" + tenant));
                    in.removeAll(taken);
                }
                long expected = in.stream().mapToLong(Task::dueAtMillis).min().orElse(Long.MAX_VALUE);
                assertEquals(expected, line.firstDue(), "step " + step);
                assertEquals(in.size(), line.size());
            }
        }
    }
}
