package dev.taskline.queue;

import dev.taskline.model.Task;
import java.util.PriorityQueue;
import java.util.UUID;

/**
 * One queue's tasks due later on this node (delayed, or waiting out a retry's backoff), the one due
 * first at the head. Not thread-safe: {@link TaskQueue} holds its lock around every call.
 */
final class Scheduled {

    private final PriorityQueue<Task> tasks = new PriorityQueue<>(Order::dueFirst);

    void add(Task task) {
        tasks.add(task);
    }

    int size() {
        return tasks.size();
    }

    /** The task due first if it is due at {@code nowMillis}, taken out; else null. */
    Task pollDue(long nowMillis) {
        return !tasks.isEmpty() && tasks.peek().dueAtMillis() <= nowMillis ? tasks.poll() : null;
    }

    /** Whether a task is due at {@code nowMillis}. */
    boolean anyDue(long nowMillis) {
        return !tasks.isEmpty() && tasks.peek().dueAtMillis() <= nowMillis;
    }

    /** When the earliest task is due, or {@link Long#MAX_VALUE} when none is scheduled. */
    long nextDueMillis() {
        return tasks.isEmpty() ? Long.MAX_VALUE : tasks.peek().dueAtMillis();
    }

    /** How many are due at {@code nowMillis}. */
    int dueAt(long nowMillis) {
        int due = 0;
        for (Task task : tasks) {
            if (task.dueAtMillis() <= nowMillis) {
                due++;
            }
        }
        return due;
    }

    boolean remove(UUID id) {
        return tasks.removeIf(t -> t.id().equals(id));
    }
}
