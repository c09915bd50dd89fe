package dev.taskline.queue;

import dev.taskline.model.Task;
import java.util.Comparator;

/**
 * The order tasks start in: effective priority, {@code priority + agingPerSecond * seconds
 * waited}. As every waiting task ages at the same rate, that order never changes while tasks wait,
 * so it is the static key {@code priority - agingPerSecond * dueSeconds}; a heap keeps it, and a
 * steady stream of high-priority work cannot starve an old low-priority task.
 */
final class Order {

    private Order() {}

    /**
     * Highest effective priority first; among equals, the task due first, then the older id. Written
     * out rather than composed from {@code Comparator.comparing...}: the composed lambdas are classes
     * the whole JVM shares, so their inner calls are megamorphic and were a tenth of the CPU of a
     * drain with a deep backlog (every poll walks the heap's height).
     */
    static Comparator<Task> of(double agingPerSecond) {
        return (a, b) -> {
            int byKey = Double.compare(agingKey(b, agingPerSecond), agingKey(a, agingPerSecond));
            return byKey != 0 ? byKey : dueFirst(a, b);
        };
    }

    /** The task due first, then the older id. */
    static int dueFirst(Task a, Task b) {
        int byDue = Long.compare(a.dueAtMillis(), b.dueAtMillis());
        return byDue != 0 ? byDue : a.id().compareTo(b.id());
    }

    static double agingKey(Task task, double agingPerSecond) {
        return task.priority() - agingPerSecond * (task.dueAtMillis() / 1000.0);
    }
}
