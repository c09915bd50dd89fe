package dev.taskline.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.queue.Reservation.Refusal;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;

/** What the queue's tests make: queues, tasks, reservations, and the checks they share. */
final class Queues {

    private Queues() {}

    static TaskQueue queue(int capacity) {
        return new TaskQueue(new QueueConfig("q", 10_000, capacity, 30_000, 10_000));
    }

    /** Later than every task the tests make due, and earlier than those they make scheduled. */
    static final Instant NOW = Instant.ofEpochMilli(1_000_000);

    static Task task(UUID id, int priority, long enqueuedAtMillis) {
        return Task.builder(id, "q", "sleep")
                .priority(priority)
                .dueAtMillis(enqueuedAtMillis)
                .build();
    }

    /** Reserves room at {@link #NOW} for new tasks of these ids, due at once. */
    static Reservation reserve(TaskQueue queue, List<UUID> ids, String tenant) {
        return reserveTasks(
                queue,
                ids.stream()
                        .map(id -> Task.builder(id, "q", "sleep").tenant(tenant).build())
                        .toList(),
                tenant);
    }

    /** As {@link #reserve}, for tasks due after {@link #NOW}: they take scheduled room. */
    static Reservation reserveLater(TaskQueue queue, List<UUID> ids, String tenant) {
        return reserveTasks(
                queue,
                ids.stream()
                        .map(id -> Task.builder(id, "q", "sleep")
                                .tenant(tenant)
                                .dueAtMillis(NOW.toEpochMilli() + 60_000)
                                .build())
                        .toList(),
                tenant);
    }

    static Reservation reserveTasks(TaskQueue queue, List<Task> tasks, String tenant) {
        return queue.reserve(tasks.stream().map(Insert::waiting).toList(), tenant, NOW);
    }

    static boolean dispatched(Reservation reservation) {
        return reservation.refusal() == null && reservation.inserts().stream().allMatch(i -> i.claimed());
    }

    /** {@code expected} null: room was taken. */
    static void assertRoom(Refusal expected, Reservation reservation, String... message) {
        assertEquals(expected, reservation.refusal(), message.length == 0 ? null : message[0]);
    }

    static Task task(int priority, long enqueuedAtMillis) {
        return task(UUID.randomUUID(), priority, enqueuedAtMillis);
    }

    static List<UUID> ids(List<Task> tasks) {
        return tasks.stream().map(Task::id).toList();
    }

    static List<UUID> drain(TaskQueue queue) {
        List<UUID> polled = new ArrayList<>();
        for (Task t = queue.poll(); t != null; t = queue.poll()) {
            polled.add(t.id());
        }
        return polled;
    }

    /** What a queue signalled, signal by signal, for a test to count; see {@link #listen}. */
    static final class Told implements QueueSignals {
        final AtomicInteger available = new AtomicInteger();
        final AtomicInteger room = new AtomicInteger();
        final AtomicInteger scheduled = new AtomicInteger();
        final List<String> held = new ArrayList<>();
        final List<String> keyFreed = new ArrayList<>();
        final List<String> idleSlot = new ArrayList<>();

        @Override
        public void available(String queue) {
            available.incrementAndGet();
        }

        @Override
        public void room(String queue) {
            room.incrementAndGet();
        }

        @Override
        public void scheduled(String queue) {
            scheduled.incrementAndGet();
        }

        @Override
        public void held(String queue) {
            held.add(queue);
        }

        @Override
        public void keyFreed(String queue) {
            keyFreed.add(queue);
        }

        @Override
        public void idleSlot(String queue) {
            idleSlot.add(queue);
        }
    }

    /** Gives {@code queue} signals that a test can count, as the wiring gives a node's queues theirs. */
    static Told listen(TaskQueue queue) {
        Told told = new Told();
        queue.signals(told);
        return told;
    }

    static void assertBalanced(TaskQueue queue) {
        TaskQueue.Counts counts = queue.counts();
        assertEquals(counts.accepted() - counts.finished(), counts.unfinished(), counts.toString());
    }

    static TaskQueue keyed(int slots, int perKey, java.util.Map<String, Integer> own) {
        return new TaskQueue(new QueueConfig(
                "q",
                slots,
                100,
                30_000,
                10_000,
                3,
                1_000,
                300_000,
                60_000,
                0,
                100,
                0,
                false,
                List.of(),
                null,
                100,
                new QueueConfig.KeyLimits(perKey, own),
                QueueConfig.Fairness.TENANTS,
                null));
    }

    static TaskQueue rated(int slots, int tasks, boolean perKey) {
        return new TaskQueue(new QueueConfig(
                "q",
                slots,
                100,
                30_000,
                10_000,
                3,
                1_000,
                300_000,
                60_000,
                0,
                100,
                0,
                false,
                List.of(),
                null,
                100,
                QueueConfig.KeyLimits.NONE,
                QueueConfig.Fairness.TENANTS,
                new QueueConfig.RateLimit(tasks, 1_000, perKey)));
    }

    static Task keyedTask(String key, int priority, long dueAtMillis) {
        return Task.builder(UUID.randomUUID(), "q", "sleep")
                .priority(priority)
                .dueAtMillis(dueAtMillis)
                .concurrencyKey(key)
                .build();
    }

    static Task deadlineTask(int priority, long dueAtMillis) {
        return Task.builder(UUID.randomUUID(), "q", "sleep")
                .priority(priority)
                .dueAtMillis(dueAtMillis)
                .startBy(NOW.plusSeconds(60))
                .build();
    }
}
