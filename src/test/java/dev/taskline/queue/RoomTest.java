package dev.taskline.queue;

import static dev.taskline.queue.Queues.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.queue.Reservation.Refusal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class RoomTest {

    @Test
    void a_reservation_that_would_overshoot_capacity_is_refused_and_reserves_nothing() {
        TaskQueue queue = queue(5);
        queue.offer(List.of(task(0, 1), task(0, 2)));
        assertRoom(null, reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID()), null));
        assertEquals(1, queue.room());

        List<UUID> tooMany = List.of(UUID.randomUUID(), UUID.randomUUID());
        assertRoom(Refusal.QUEUE_FULL, reserve(queue, tooMany, null), "2 waiting + 2 reserved + 2 > 5");
        assertEquals(1, queue.room(), "a refusal takes no room");
        for (UUID id : tooMany) {
            assertFalse(queue.heldIds().contains(id), "a refusal holds no id");
        }
        assertRoom(null, reserve(queue, List.of(UUID.randomUUID()), null), "exactly filling the queue is allowed");
        assertEquals(0, queue.room());
    }

    @Test
    void one_reservation_takes_waiting_room_for_due_tasks_and_scheduled_room_for_later_ones() {
        TaskQueue queue = new TaskQueue(new QueueConfig("q", 1, 3, 30_000, 10_000, 3, 1_000, 300_000, 60_000, 0, 2, 0));
        AtomicInteger scheduledCalls = listen(queue).scheduled;
        List<UUID> due = List.of(UUID.randomUUID(), UUID.randomUUID());
        List<UUID> later = List.of(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID());
        List<Task> tasks = new ArrayList<>();
        due.forEach(id -> tasks.add(Task.builder(id, "q", "sleep").build()));
        later.forEach(id -> tasks.add(Task.builder(id, "q", "sleep")
                .dueAtMillis(NOW.toEpochMilli() + 60_000)
                .build()));
        Reservation refused = reserveTasks(queue, tasks, null);
        assertRoom(Refusal.SCHEDULED_FULL, refused, "three later tasks, scheduled capacity 2");
        assertEquals(3, refused.refused(), "the refusal names what did not fit");
        assertEquals(3, queue.room(), "and takes nothing");

        Reservation fits = reserveTasks(queue, tasks.subList(0, 4), null);
        assertRoom(null, fits);
        fits.commit();
        assertEquals(2, queue.waiting());
        assertEquals(2, queue.scheduled());
        assertEquals(1, scheduledCalls.get());
        assertEquals(4, queue.counts().accepted());
        assertEquals(
                Refusal.QUEUE_FULL,
                reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID()), null)
                        .refusal());
    }

    @Test
    void cancelling_a_reservation_gives_the_room_and_the_ids_back() {
        TaskQueue queue = queue(3);
        List<UUID> ids = List.of(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID());
        Reservation reservation = reserve(queue, ids, null);
        assertRoom(null, reservation);
        assertRoom(Refusal.QUEUE_FULL, reserve(queue, List.of(UUID.randomUUID()), null));

        reservation.abort();
        assertEquals(3, queue.room());
        assertTrue(queue.heldIds().isEmpty());
        assertRoom(null, reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID()), null));
    }

    @Test
    void filling_a_reservation_makes_the_tasks_pollable_and_wakes_the_worker() {
        TaskQueue queue = queue(3);
        AtomicInteger wakeUps = listen(queue).available;
        Task a = task(0, 1);
        Task b = task(1, 2);
        Reservation reservation = reserveTasks(queue, List.of(a, b), null);
        assertRoom(null, reservation);
        assertNull(queue.poll(), "reserved tasks are not journaled yet, so not runnable");
        assertEquals(0, wakeUps.get());

        reservation.commit();
        assertEquals(1, wakeUps.get());
        assertEquals(2, queue.waiting());
        assertEquals(1, queue.room(), "the reserved room became waiting room, not extra room");
        assertEquals(List.of(b.id(), a.id()), drain(queue));
        assertEquals(Set.of(a.id(), b.id()), Set.copyOf(queue.heldIds()), "polled tasks stay held while they run");
    }

    @Test
    void room_is_capacity_less_waiting_and_reserved_but_not_running() {
        TaskQueue queue = queue(10);
        assertEquals(10, queue.room());
        queue.offer(List.of(task(0, 1), task(0, 2), task(0, 3)));
        assertEquals(7, queue.room());
        reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID()), null);
        assertEquals(5, queue.room());
        queue.poll();
        assertEquals(6, queue.room(), "a running task no longer takes waiting room");
        assertEquals(2, queue.waiting());
    }

    @Test
    void a_batch_that_fits_in_part_sends_its_best_tasks_to_the_worker_and_the_rest_wait() {
        TaskQueue queue = new TaskQueue(new QueueConfig("q", 1, 10, 30_000, 10_000));
        queue.servedBy("node/q", Duration.ofSeconds(30));
        queue.claimAhead(1);
        Reservation batch = reserveTasks(queue, List.of(task(0, 1), task(7, 2), task(3, 3), task(5, 4)), null);
        assertEquals(
                List.of(false, true, false, true),
                batch.inserts().stream().map(Insert::claimed).toList(),
                "the slot and the one claim ahead take the two best");
        batch.commit();
        assertEquals(2, queue.waiting(), "the other two wait");
        assertEquals(2, queue.counts().claimedAhead());
        assertBalanced(queue);
    }

    @Test
    void an_idle_queue_dispatches_straight_to_free_slots_and_a_busy_one_does_not() {
        TaskQueue queue = new TaskQueue(new QueueConfig("q", 3, 10, 30_000, 10_000));
        queue.servedBy("node/q", Duration.ofSeconds(30));
        Reservation two = reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID()), null);
        assertTrue(dispatched(two));
        assertEquals("node/q", two.inserts().get(0).workerId());
        assertEquals(
                NOW.plusSeconds(30),
                two.inserts().get(0).leaseUntil(),
                "the worker's lease, from the reservation's now");
        assertEquals(0, queue.counts().running(), "not in custody before its insert commits");
        assertEquals(
                queue.counts().accepted() - queue.counts().finished(),
                queue.counts().unfinished());
        Reservation split = reserveTasks(queue, List.of(task(0, 1), task(0, 2)), null);
        assertEquals(
                List.of(true, false),
                split.inserts().stream().map(Insert::claimed).toList(),
                "one slot left for two: the first takes it, the other waits");
        split.abort();
        two.abort();
        assertTrue(
                dispatched(reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID()), null)),
                "cancelling gave the slots back");
        TaskQueue other = new TaskQueue(new QueueConfig("q", 3, 10, 30_000, 10_000));
        other.servedBy("node/q", Duration.ofSeconds(30));
        other.offer(List.of(task(0, 1)));
        assertFalse(
                dispatched(reserve(other, List.of(UUID.randomUUID()), null)), "a waiting task must not be overtaken");
        TaskQueue unserved = new TaskQueue(new QueueConfig("q", 3, 10, 30_000, 10_000));
        assertFalse(dispatched(reserve(unserved, List.of(UUID.randomUUID()), null)), "no worker, no dispatch");
    }

    @Test
    void an_ask_sets_apart_what_is_due_later_and_what_an_idle_worker_may_take_at_once() {
        TaskQueue queue = keyed(2, 1, java.util.Map.of());
        Gates gates = new Gates(queue.config(), Order.of(0), new WaitingLine(Order.of(0), false, t -> 1));
        Insert plain = Insert.waiting(task(0, NOW.toEpochMilli()));
        Insert keyed = Insert.waiting(keyedTask("k", 0, NOW.toEpochMilli()));
        Insert later = Insert.waiting(task(0, NOW.toEpochMilli() + 1_000));
        Room.Ask ask = Room.Ask.of(List.of(plain, keyed, later), NOW, gates);
        assertEquals(List.of(later), ask.later());
        assertEquals(List.of(plain, keyed), ask.due());
        assertEquals(List.of(plain), ask.dispatchable(), "a keyed task's start is its claim's to decide");
    }
}
