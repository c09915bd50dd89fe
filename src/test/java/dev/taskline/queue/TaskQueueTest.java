package dev.taskline.queue;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.queue.TaskQueue.Refusal;
import dev.taskline.queue.TaskQueue.Reservation;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class TaskQueueTest {

    private static TaskQueue queue(int capacity) {
        return new TaskQueue(new QueueConfig("q", 10_000, capacity, 30_000, 10_000));
    }

    /** Later than every task the tests make due, and earlier than those they make scheduled. */
    private static final Instant NOW = Instant.ofEpochMilli(1_000_000);

    private static Task task(UUID id, int priority, long enqueuedAtMillis) {
        return Task.builder(id, "q", "sleep")
                .priority(priority)
                .dueAtMillis(enqueuedAtMillis)
                .build();
    }

    /** Reserves room at {@link #NOW} for new tasks of these ids, due at once. */
    private static Reservation reserve(TaskQueue queue, List<UUID> ids, String tenant) {
        return reserveTasks(
                queue,
                ids.stream()
                        .map(id -> Task.builder(id, "q", "sleep").tenant(tenant).build())
                        .toList(),
                tenant);
    }

    /** As {@link #reserve}, for tasks due after {@link #NOW}: they take scheduled room. */
    private static Reservation reserveLater(TaskQueue queue, List<UUID> ids, String tenant) {
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

    private static Reservation reserveTasks(TaskQueue queue, List<Task> tasks, String tenant) {
        return queue.reserve(tasks.stream().map(Insert::waiting).toList(), tenant, NOW);
    }

    private static boolean dispatched(Reservation reservation) {
        return reservation.refusal() == null && reservation.inserts().stream().allMatch(i -> i.claimed());
    }

    /** {@code expected} null: room was taken. */
    private static void assertRoom(Refusal expected, Reservation reservation, String... message) {
        assertEquals(expected, reservation.refusal(), message.length == 0 ? null : message[0]);
    }

    private static Task task(int priority, long enqueuedAtMillis) {
        return task(UUID.randomUUID(), priority, enqueuedAtMillis);
    }

    private static List<UUID> ids(List<Task> tasks) {
        return tasks.stream().map(Task::id).toList();
    }

    private static List<UUID> drain(TaskQueue queue) {
        List<UUID> polled = new ArrayList<>();
        for (Task t = queue.poll(); t != null; t = queue.poll()) {
            polled.add(t.id());
        }
        return polled;
    }

    @Test
    void higher_priority_polls_first_whatever_the_arrival_order() {
        TaskQueue queue = queue(10);
        Task low = task(-5, 1);
        Task mid = task(0, 2);
        Task high = task(7, 3);
        assertEquals(3, queue.offer(List.of(low, mid, high)));
        assertEquals(List.of(high.id(), mid.id(), low.id()), drain(queue));
    }

    @Test
    void equal_priority_polls_the_oldest_first() {
        TaskQueue queue = queue(10);
        Task newer = task(3, 200);
        Task older = task(3, 100);
        queue.offer(List.of(newer, older));
        assertEquals(List.of(older.id(), newer.id()), drain(queue));
    }

    @Test
    void equal_priority_and_arrival_polls_the_smaller_id_first() {
        // Ids are time-ordered, so the id breaks ties in arrival order within one millisecond.
        TaskQueue queue = queue(10);
        Task second = task(new UUID(0, 2), 0, 100);
        Task first = task(new UUID(0, 1), 0, 100);
        Task third = task(new UUID(1, 0), 0, 100);
        queue.offer(List.of(third, second, first));
        assertEquals(List.of(first.id(), second.id(), third.id()), drain(queue));
    }

    @Test
    void an_empty_queue_polls_null() {
        assertNull(queue(1).poll());
    }

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
        AtomicInteger scheduledCalls = new AtomicInteger();
        queue.onScheduled(scheduledCalls::incrementAndGet);
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
    void a_reservation_holds_its_ids_so_page_in_skips_them() {
        TaskQueue queue = queue(5);
        UUID id = UUID.randomUUID();
        assertRoom(null, reserve(queue, List.of(id), null));
        assertTrue(queue.heldIds().contains(id));
        assertEquals(0, queue.offer(List.of(task(id, 0, 1))), "page-in must not load a second copy");
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
        AtomicInteger wakeUps = new AtomicInteger();
        queue.onAvailable(wakeUps::incrementAndGet);
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
    void offer_skips_ids_already_held_and_counts_only_what_it_added() {
        TaskQueue queue = queue(10);
        Task a = task(0, 1);
        Task b = task(0, 2);
        assertEquals(2, queue.offer(List.of(a, b)));
        Task c = task(0, 3);
        assertEquals(1, queue.offer(List.of(a, c, task(b.id(), 9, 9))));
        assertEquals(3, queue.waiting());
        assertEquals(List.of(a.id(), b.id(), c.id()), drain(queue), "the duplicate of b was not added at priority 9");
    }

    @Test
    void offer_skips_ids_that_are_polled_and_still_running() {
        TaskQueue queue = queue(10);
        Task a = task(0, 1);
        queue.offer(List.of(a));
        assertEquals(a.id(), queue.poll().id());
        assertEquals(0, queue.offer(List.of(a)));
        assertNull(queue.poll());
    }

    @Test
    void offer_stops_at_capacity() {
        TaskQueue queue = queue(3);
        assertRoom(null, reserve(queue, List.of(UUID.randomUUID()), null));
        List<Task> page = List.of(task(0, 1), task(0, 2), task(0, 3), task(0, 4));
        assertEquals(2, queue.offer(page), "one place is reserved, so two of four fit");
        assertEquals(0, queue.room());
        assertEquals(List.of(page.get(0).id(), page.get(1).id()), drain(queue));
        assertFalse(queue.heldIds().contains(page.get(2).id()), "a task that did not fit is not held");
    }

    @Test
    void offer_wakes_the_worker_only_when_it_added_something() {
        TaskQueue queue = queue(1);
        AtomicInteger wakeUps = new AtomicInteger();
        queue.onAvailable(wakeUps::incrementAndGet);
        queue.offer(List.of(task(0, 1)));
        assertEquals(1, wakeUps.get());
        queue.offer(List.of(task(0, 2)));
        queue.offer(List.of());
        assertEquals(1, wakeUps.get());
    }

    @Test
    void a_released_id_may_be_offered_again() {
        TaskQueue queue = queue(10);
        Task a = task(0, 1);
        queue.offer(List.of(a));
        queue.poll();
        queue.done(a.id());
        assertFalse(queue.heldIds().contains(a.id()));
        assertEquals(1, queue.offer(List.of(a)), "a task handed back to the journal may be paged in again");
        assertEquals(a.id(), queue.poll().id());
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
    void the_oldest_waiting_age_is_measured_from_the_earliest_arrival() {
        TaskQueue queue = queue(10);
        assertEquals(0, queue.oldestWaitingAgeMs(1_000));
        queue.offer(List.of(task(9, 700), task(0, 400)));
        assertEquals(600, queue.oldestWaitingAgeMs(1_000));
    }

    @Test
    void custody_counts_balance_through_every_move() {
        TaskQueue queue = queue(10);
        Task a = task(0, 1);
        Task b = task(0, 2);
        Task c = task(0, 3);
        Reservation reservation = reserveTasks(queue, List.of(a, b), null);
        assertRoom(null, reservation);
        assertBalanced(queue);
        reservation.commit();
        queue.offer(List.of(c));
        assertBalanced(queue);
        Task first = queue.poll();
        assertBalanced(queue);
        queue.reschedule(first.pendingAgain(1, 1, 10));
        assertBalanced(queue);
        assertEquals(1, queue.promoteDue(10));
        queue.done(queue.poll().id());
        assertTrue(queue.remove(queue.poll().id() == c.id() ? b.id() : c.id()) || true);
        assertBalanced(queue);
        TaskQueue.Counts counts = queue.counts();
        assertEquals(3, counts.accepted());
    }

    private static void assertBalanced(TaskQueue queue) {
        TaskQueue.Counts counts = queue.counts();
        assertEquals(counts.accepted() - counts.finished(), counts.unfinished(), counts.toString());
    }

    @Test
    void poll_hands_out_no_more_tasks_than_the_queue_has_slots() {
        TaskQueue queue = new TaskQueue(new QueueConfig("q", 2, 10, 30_000, 10_000));
        queue.offer(List.of(task(0, 1), task(0, 2), task(0, 3)));
        Task first = queue.poll();
        queue.poll();
        assertNull(queue.poll(), "both slots are taken");
        queue.done(first.id());
        assertNotNull(queue.poll(), "a freed slot takes the next task");
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
    void tasks_claimed_ahead_take_waiting_room_and_a_returned_handler_frees_its_slot() {
        TaskQueue queue = new TaskQueue(new QueueConfig("q", 2, 3, 30_000, 10_000));
        queue.servedBy("node/q", Duration.ofSeconds(30));
        queue.claimAhead(2);
        for (int i = 0; i < 4; i++) {
            Reservation one = reserve(queue, List.of(UUID.randomUUID()), null);
            assertTrue(dispatched(one), "two to the slots, two claimed ahead: " + i);
            one.commit();
        }
        Reservation fifth = reserve(queue, List.of(UUID.randomUUID()), null);
        assertFalse(dispatched(fifth), "no more claims ahead than allowed");
        fifth.commit();
        assertRoom(
                Refusal.QUEUE_FULL,
                reserve(queue, List.of(UUID.randomUUID()), null),
                "two claimed ahead and one in line fill a capacity of three");
        queue.started();
        queue.started();
        TaskQueue.Counts counts = queue.counts();
        assertEquals(3, counts.waiting(), "in line and claimed ahead");
        assertEquals(2, counts.claimedAhead());
        assertEquals(2, counts.running());
        assertBalanced(queue);

        TaskQueue.Dispatched first = queue.pollDispatched();
        queue.returned();
        counts = queue.counts();
        assertEquals(2, counts.running(), "still running in the journal until its end commits");
        assertEquals(1, counts.finishing());
        assertBalanced(queue);
        assertEquals(1, queue.room(), "its slot went to a task claimed ahead, whose place is free");
        assertEquals(1, queue.pollAhead(10).size(), "the freed slot lets the one in line be claimed ahead");
        assertEquals(List.of(), queue.pollAhead(10), "one running and three claimed: slots and claims ahead are full");
        queue.claimReturned();
        queue.done(first.task().id(), TaskQueue.Stage.FINISHING);
        assertEquals(1, queue.counts().finished());
        assertBalanced(queue);
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
    void poll_ahead_takes_the_best_waiting_tasks_up_to_the_slots_and_claims_ahead() {
        TaskQueue queue = new TaskQueue(new QueueConfig("q", 1, 10, 30_000, 10_000));
        queue.offer(List.of(task(0, 1), task(5, 2), task(1, 3)));
        assertEquals(1, queue.pollAhead(10).size(), "nothing ahead until a worker asks for it");
        queue.claimAhead(1);
        List<Task> more = queue.pollAhead(10);
        assertEquals(List.of(1), more.stream().map(Task::priority).toList(), "the best of the rest");
        assertEquals(List.of(), queue.pollAhead(10));
        assertEquals(1, queue.waiting());
        assertBalanced(queue);
    }

    @Test
    void a_tenant_holds_no_more_than_its_limit_and_its_ended_tasks_make_room() {
        TaskQueue queue =
                new TaskQueue(new QueueConfig("q", 1, 100, 30_000, 10_000, 3, 1_000, 300_000, 60_000, 0, 100, 3));
        List<UUID> acme = List.of(UUID.randomUUID(), UUID.randomUUID());
        Reservation acmes = reserve(queue, acme, "acme");
        assertRoom(null, acmes);
        assertRoom(
                Refusal.TENANT_LIMIT,
                reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID()), "acme"),
                "2 held + 2 > 3");
        assertRoom(
                Refusal.TENANT_LIMIT,
                reserveLater(queue, List.of(UUID.randomUUID(), UUID.randomUUID()), "acme"),
                "delayed tasks count too");
        queue.servedBy("node/q", Duration.ofSeconds(30));
        assertRoom(
                Refusal.TENANT_LIMIT,
                reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID()), "acme"),
                "nor free slots");
        queue.servedBy(null, null);
        assertRoom(
                null,
                reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID()), "globex"),
                "another tenant has a limit of its own");
        assertRoom(
                null,
                reserve(
                        queue,
                        List.of(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID()),
                        null),
                "a task without a tenant is not limited");
        assertEquals(2, queue.tenantHeld("acme"));

        acmes.commit();
        assertRoom(null, reserve(queue, List.of(UUID.randomUUID()), "acme"), "exactly at the limit");
        assertEquals(3, queue.tenantHeld("acme"));

        Task running = queue.poll();
        assertEquals("acme", running.tenant());
        queue.done(running.id());
        UUID waiting = acme.get(0).equals(running.id()) ? acme.get(1) : acme.get(0);
        assertTrue(queue.remove(waiting), "the other one is cancelled while it waits");
        assertEquals(1, queue.tenantHeld("acme"), "the reservation is all that is left");
        assertRoom(null, reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID()), "acme"));
    }

    @Test
    void tasks_read_back_from_the_journal_count_for_their_tenant_beyond_its_limit() {
        TaskQueue queue =
                new TaskQueue(new QueueConfig("q", 1, 100, 30_000, 10_000, 3, 1_000, 300_000, 60_000, 0, 100, 2));
        List<Task> stored = new ArrayList<>();
        for (int i = 0; i < 3; i++) {
            stored.add(Task.builder(UUID.randomUUID(), "q", "sleep")
                    .tenant("acme")
                    .dueAtMillis(i)
                    .build());
        }
        assertEquals(3, queue.offer(stored), "the journal's work is taken whatever the limit");
        assertEquals(3, queue.tenantHeld("acme"));
        assertRoom(Refusal.TENANT_LIMIT, reserve(queue, List.of(UUID.randomUUID()), "acme"));
        assertEquals(0, queue.offer(stored), "ids already held are skipped");
        assertEquals(3, queue.tenantHeld("acme"), "and not counted twice");
    }

    @Test
    void a_dispatched_task_counts_for_its_tenant_until_it_ends_and_a_rescheduled_one_until_it_is_handed_back() {
        TaskQueue queue =
                new TaskQueue(new QueueConfig("q", 2, 100, 30_000, 10_000, 3, 1_000, 300_000, 60_000, 0, 1, 2));
        Task a = Task.builder(UUID.randomUUID(), "q", "sleep")
                .tenant("acme")
                .maxAttempts(3)
                .dueAtMillis(1)
                .build();
        Task b = Task.builder(UUID.randomUUID(), "q", "sleep")
                .tenant("acme")
                .maxAttempts(3)
                .dueAtMillis(1)
                .build();
        queue.servedBy("node/q", Duration.ofSeconds(30));
        Reservation both = reserveTasks(queue, List.of(a, b), "acme");
        assertTrue(dispatched(both));
        both.commit();
        assertEquals(2, queue.tenantHeld("acme"));
        assertTrue(queue.reschedule(a.pendingAgain(2, 1, 5_000)), "a retry waits out its backoff here");
        assertEquals(2, queue.tenantHeld("acme"), "and still counts");
        assertFalse(queue.reschedule(b.pendingAgain(2, 1, 5_000)), "the scheduled set (1) is full: handed back");
        assertEquals(1, queue.tenantHeld("acme"));
        assertRoom(null, reserve(queue, List.of(UUID.randomUUID()), "acme"));
    }

    @Test
    void a_poll_for_some_types_takes_the_best_of_those_and_leaves_the_rest_in_line() {
        TaskQueue queue = new TaskQueue(new QueueConfig("q", 3, 100, 30_000, 10_000));
        Task lowCrop = Task.builder(UUID.randomUUID(), "q", "crop")
                .priority(0)
                .dueAtMillis(1)
                .build();
        Task render = Task.builder(UUID.randomUUID(), "q", "render")
                .priority(9)
                .dueAtMillis(2)
                .build();
        Task highCrop = Task.builder(UUID.randomUUID(), "q", "crop")
                .priority(5)
                .dueAtMillis(3)
                .build();
        Task blur = Task.builder(UUID.randomUUID(), "q", "blur")
                .priority(1)
                .dueAtMillis(4)
                .build();
        Task lateCrop = Task.builder(UUID.randomUUID(), "q", "crop")
                .priority(5)
                .dueAtMillis(5)
                .build();
        queue.offer(List.of(lowCrop, render, highCrop, blur, lateCrop));

        assertEquals(
                List.of(highCrop.id(), lateCrop.id()),
                ids(queue.poll(2, t -> Set.of("crop", "resize").contains(t.type()))),
                "priority first, then the one due first");
        assertEquals(List.of(), queue.poll(5, t -> t.type().equals("resize")));
        assertEquals(
                List.of(blur.id()),
                ids(queue.poll(5, t -> Set.of("blur", "crop").contains(t.type()))),
                "one slot was left");
        assertFalse(queue.canPoll(), "every slot is taken");
        queue.done(highCrop.id());
        assertTrue(queue.canPoll());
        assertEquals(List.of(render.id()), ids(List.of(queue.poll())), "the others kept their order");
        assertEquals(1, queue.waiting(), "the low crop still waits");
        assertEquals(3, queue.counts().running());
    }

    @Test
    void a_paused_queue_takes_tasks_but_hands_none_out_until_it_resumes() {
        TaskQueue queue = queue(10);
        AtomicInteger told = new AtomicInteger();
        queue.onAvailable(told::incrementAndGet);
        queue.servedBy("node/q", Duration.ofSeconds(30));
        queue.claimAhead(5);
        queue.paused(true);
        assertEquals(1, told.get(), "the worker is told, to hand back what it holds leased");
        queue.paused(true);
        assertEquals(1, told.get(), "pausing a paused queue is no news");
        Reservation admitted = reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID()), null);
        assertRoom(null, admitted, "a paused queue still takes tasks within capacity");
        assertFalse(admitted.inserts().stream().anyMatch(Insert::claimed), "none is journaled claimed for the worker");
        admitted.commit();
        assertEquals(2, queue.counts().waiting());
        assertNull(queue.poll());
        assertEquals(List.of(), queue.pollAhead(10));
        assertEquals(List.of(), queue.poll(10, t -> true));
        assertFalse(queue.canPoll());

        int before = told.get();
        queue.paused(false);
        assertEquals(before + 1, told.get(), "the resume wakes the worker");
        assertEquals(2, queue.pollAhead(10).size());
    }

    private static TaskQueue keyed(int slots, int perKey, java.util.Map<String, Integer> own) {
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

    private static TaskQueue rated(int slots, int tasks, boolean perKey) {
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

    @Test
    void a_rate_limited_queue_dispatches_nothing_at_admission_and_claims_nothing_ahead() {
        TaskQueue queue = rated(2, 10, false);
        queue.servedBy("node/q", Duration.ofSeconds(30));
        queue.claimAhead(5);
        Reservation admitted = reserve(queue, List.of(UUID.randomUUID(), UUID.randomUUID(), UUID.randomUUID()), null);
        assertFalse(admitted.inserts().stream().anyMatch(Insert::claimed), "every start is the journal's to count");
        admitted.commit();
        assertEquals(2, queue.pollAhead(10).size(), "the free slots, and nothing ahead of them");
        assertEquals(List.of(), queue.pollAhead(10));
    }

    @Test
    void a_spent_queue_budget_holds_everything_in_line_until_it_is_lifted() {
        TaskQueue queue = rated(10, 10, false);
        AtomicInteger told = new AtomicInteger();
        queue.onAvailable(told::incrementAndGet);
        Task first = task(5, 1);
        Task second = task(0, 2);
        Task third = task(0, 3);
        queue.offer(List.of(first, second, third));
        List<Task> taken = queue.pollAhead(10);
        assertEquals(3, taken.size());
        queue.done(first.id(), TaskQueue.Stage.CLAIMED);
        assertTrue(queue.rateFull(second, TaskQueue.Stage.CLAIMED));
        assertTrue(queue.rateFull(third, TaskQueue.Stage.CLAIMED));
        assertEquals(2, queue.heldByRate());
        assertEquals(0, queue.heldByKeys());
        assertFalse(queue.canPoll(), "a free slot, a waiting task, and still nothing to hand out");
        assertNull(queue.poll());
        assertEquals(List.of(), queue.poll(10, t -> true));
        int before = told.get();
        queue.liftRate("");
        assertEquals(before + 1, told.get(), "the worker is woken to claim again");
        assertEquals(0, queue.heldByRate());
        assertEquals(List.of(second.id(), third.id()), ids(queue.pollAhead(10)), "in their order");
        assertEquals(
                queue.counts().accepted() - queue.counts().finished(),
                queue.counts().unfinished());
    }

    @Test
    void a_spent_key_budget_holds_only_that_key_and_tasks_without_a_key_have_their_own() {
        TaskQueue queue = rated(10, 10, true);
        Task a1 = keyedTask("a", 0, 1);
        Task a2 = keyedTask("a", 0, 2);
        Task b1 = keyedTask("b", 0, 3);
        Task none = task(0, 4);
        queue.offer(List.of(a1, none));
        assertEquals(List.of(a1.id(), none.id()), ids(queue.pollAhead(10)));
        assertTrue(queue.rateFull(a1, TaskQueue.Stage.CLAIMED));
        assertTrue(queue.rateFull(none, TaskQueue.Stage.CLAIMED));
        queue.offer(List.of(a2, b1, task(0, 5)));
        assertEquals(List.of(b1.id()), ids(queue.pollAhead(10)), "a's and the keyless budget's tasks wait aside");
        assertEquals(4, queue.heldByRate());
        assertEquals("a", queue.gate(a1).bucket());
        assertEquals("", queue.gate(none).bucket(), "the tasks without a key share a budget of their own");
        queue.liftRate("a");
        assertEquals(List.of(a1.id(), a2.id()), ids(queue.pollAhead(10)));
        assertEquals(2, queue.heldByRate());
        assertEquals(
                queue.counts().accepted() - queue.counts().finished(),
                queue.counts().unfinished());
    }

    @Test
    void a_queue_without_a_gate_needs_no_gated_claim() {
        assertNull(queue(10).gate(task(0, 1)));
        assertNull(keyed(10, 0, java.util.Map.of("a", 1)).gate(keyedTask("b", 0, 1)), "only some keys are bounded");
        assertEquals(
                1,
                keyed(10, 0, java.util.Map.of("a", 1))
                        .gate(keyedTask("a", 0, 1))
                        .keyLimit());
        assertNull(keyed(10, 2, java.util.Map.of()).gate(keyedTask("a", 0, 1)).bucket(), "a key bound, no rate limit");
    }

    private static Task keyedTask(String key, int priority, long dueAtMillis) {
        return Task.builder(UUID.randomUUID(), "q", "sleep")
                .priority(priority)
                .dueAtMillis(dueAtMillis)
                .concurrencyKey(key)
                .build();
    }

    @Test
    void a_key_at_its_bound_waits_aside_and_holds_up_no_other_task() {
        TaskQueue queue = keyed(10, 2, java.util.Map.of("solo", 1));
        List<Task> a = List.of(keyedTask("a", 9, 1), keyedTask("a", 9, 2), keyedTask("a", 9, 3), keyedTask("a", 9, 4));
        Task plain = task(0, 5);
        Task solo1 = keyedTask("solo", 0, 6);
        Task solo2 = keyedTask("solo", 0, 7);
        List<Task> all = new ArrayList<>(a);
        all.addAll(List.of(plain, solo1, solo2));
        assertEquals(7, queue.offer(all));
        assertEquals(3, queue.heldByKeys(), "two of a and one of solo wait aside");
        assertEquals(7, queue.counts().waiting(), "aside is still waiting, for the counts");
        List<Task> taken = queue.pollAhead(10);
        assertEquals(
                List.of(a.get(0).id(), a.get(1).id(), plain.id(), solo1.id()),
                ids(taken),
                "the best two of a, then what is not held back, in order");
        assertEquals(List.of(), queue.pollAhead(10));

        queue.done(a.get(0).id(), TaskQueue.Stage.CLAIMED);
        assertEquals(List.of(a.get(2).id()), ids(queue.pollAhead(10)), "a's room went to its next task");
        assertEquals(
                queue.counts().accepted() - queue.counts().finished(),
                queue.counts().unfinished());
    }

    @Test
    void a_key_found_full_in_the_journal_takes_no_claims_until_it_is_tried_again() {
        TaskQueue queue = keyed(10, 2, java.util.Map.of());
        AtomicInteger told = new AtomicInteger();
        queue.onAvailable(told::incrementAndGet);
        Task first = keyedTask("a", 0, 1);
        Task second = keyedTask("a", 0, 2);
        queue.offer(List.of(first, second));
        assertEquals(2, queue.pollAhead(10).size());
        assertTrue(queue.keyFull(first, TaskQueue.Stage.CLAIMED), "other nodes run a's tasks");
        queue.done(second.id(), TaskQueue.Stage.CLAIMED);
        assertEquals(List.of(), queue.pollAhead(10), "blocked: room here, none in the journal");
        assertEquals(1, queue.heldByKeys());
        int before = told.get();
        queue.retryKey("a");
        assertEquals(before + 1, told.get(), "the worker is woken to claim again");
        assertEquals(List.of(first.id()), ids(queue.pollAhead(10)));
    }

    @Test
    void a_task_of_a_bounded_key_is_never_dispatched_at_admission_and_can_be_cancelled_aside() {
        TaskQueue queue = keyed(3, 1, java.util.Map.of());
        queue.servedBy("node/q", Duration.ofSeconds(30));
        Reservation mixed = reserveTasks(queue, List.of(keyedTask("a", 0, 1), task(0, 2)), null);
        assertEquals(
                List.of(false, true),
                mixed.inserts().stream().map(Insert::claimed).toList(),
                "the keyed task waits for a claim, which decides its key's room across nodes");
        mixed.commit();
        Task aside = keyedTask("a", 0, 3);
        queue.offer(List.of(aside));
        assertEquals(1, queue.heldByKeys());
        assertTrue(queue.remove(aside.id()));
        assertEquals(0, queue.heldByKeys());
        assertEquals(
                queue.counts().accepted() - queue.counts().finished(),
                queue.counts().unfinished());
    }

    @Test
    void a_task_of_a_bounded_key_is_claimed_into_a_free_slot_but_never_ahead() {
        TaskQueue queue = keyed(1, 2, java.util.Map.of());
        queue.servedBy("node/q", Duration.ofSeconds(30));
        queue.claimAhead(5);
        Task first = keyedTask("a", 5, 1);
        Task second = keyedTask("a", 5, 2);
        Task plain = task(0, 3);
        queue.offer(List.of(first, second, plain));
        assertEquals(
                List.of(first.id()),
                ids(queue.pollAhead(10)),
                "the free slot takes the best; the next is keyed and waits for a slot, nothing is claimed ahead of it");
        queue.started();
        queue.returned();
        queue.done(first.id(), TaskQueue.Stage.FINISHING);
        assertEquals(
                List.of(second.id(), plain.id()),
                ids(queue.pollAhead(10)),
                "the keyed one into the freed slot, the one without a key ahead behind it");
    }

    @Test
    void a_keyed_task_first_in_line_stops_claims_ahead_so_that_a_slot_frees_for_it() {
        TaskQueue queue = keyed(1, 2, java.util.Map.of());
        queue.servedBy("node/q", Duration.ofSeconds(30));
        queue.claimAhead(5);
        Task first = task(9, 1);
        Task keyedTask = keyedTask("a", 5, 2);
        List<Task> after = List.of(task(0, 3), task(0, 4), task(0, 5));
        List<Task> all = new ArrayList<>(List.of(first, keyedTask));
        all.addAll(after);
        queue.offer(all);
        assertEquals(
                List.of(first.id()),
                ids(queue.pollAhead(10)),
                "the keyed task is next: nothing is claimed ahead of it, though claims ahead are allowed");
        queue.started();
        queue.returned();
        queue.done(first.id(), TaskQueue.Stage.FINISHING);
        List<Task> next = queue.pollAhead(10);
        assertEquals(keyedTask.id(), next.get(0).id(), "it takes the slot that freed");
        assertEquals(4, next.size(), "and claims ahead go on behind it");
    }

    private static Task deadlineTask(int priority, long dueAtMillis) {
        return Task.builder(UUID.randomUUID(), "q", "sleep")
                .priority(priority)
                .dueAtMillis(dueAtMillis)
                .startBy(NOW.plusSeconds(60))
                .build();
    }

    @Test
    void a_task_with_a_deadline_is_claimed_into_a_free_slot_but_never_ahead() {
        TaskQueue queue = new TaskQueue(new QueueConfig("q", 1, 10, 30_000, 10_000));
        queue.servedBy("node/q", Duration.ofSeconds(30));
        queue.claimAhead(5);
        Task first = task(9, 1);
        Task late = deadlineTask(5, 2);
        Task plain = task(0, 3);
        queue.offer(List.of(first, late, plain));
        assertEquals(
                List.of(first.id()),
                ids(queue.pollAhead(10)),
                "its claim is its start: it waits for a slot, and nothing is claimed ahead of it");
        queue.started();
        queue.returned();
        queue.done(first.id(), TaskQueue.Stage.FINISHING);
        assertEquals(
                List.of(late.id(), plain.id()),
                ids(queue.pollAhead(10)),
                "into the freed slot, the rest ahead behind it");
        Task retried = deadlineTask(5, 4).pendingAgain(1, 1, 4);
        assertFalse(retried.deadlineHolds(), "an attempt was made: the deadline no longer holds");
    }

    @Test
    void a_submission_with_a_deadline_is_never_dispatched_at_admission() {
        TaskQueue queue = new TaskQueue(new QueueConfig("q", 1, 10, 30_000, 10_000));
        queue.servedBy("node/q", Duration.ofSeconds(30));
        queue.claimAhead(5);
        Insert withDeadline = Insert.waiting(task(0, 1), Instant.ofEpochMilli(1), NOW.plusSeconds(60));
        Reservation batch = queue.reserve(List.of(withDeadline, Insert.waiting(task(0, 2))), null, NOW);
        // The insert is stamped when its group goes out, maybe past the deadline; only a claim checks it.
        assertEquals(
                List.of(false, true),
                batch.inserts().stream().map(Insert::claimed).toList(),
                "the one with a deadline waits for a claim; the other takes the free slot");
        assertEquals(
                NOW.plusSeconds(60), batch.inserts().get(0).startBy(), "the deadline goes into the journal with it");
        batch.abort();
        assertEquals(
                List.of(true, true),
                reserveTasks(queue, List.of(task(0, 3), task(0, 4)), null).inserts().stream()
                        .map(Insert::claimed)
                        .toList(),
                "without deadlines, the second is claimed ahead");
    }

    @Test
    void under_a_per_key_rate_limit_no_more_of_a_key_go_in_line_than_a_window_can_start() {
        TaskQueue queue = rated(10, 2, true);
        List<Task> a = List.of(keyedTask("a", 0, 1), keyedTask("a", 0, 2), keyedTask("a", 0, 3), keyedTask("a", 0, 4));
        Task b = keyedTask("b", 0, 5);
        List<Task> all = new ArrayList<>(a);
        all.add(b);
        queue.offer(all);
        assertEquals(
                List.of(a.get(0).id(), a.get(1).id(), b.id()),
                ids(queue.pollAhead(10)),
                "two of a (its budget), and b beside them; a's others wait aside, not to be claimed and refused");
        assertEquals(2, queue.heldByRate(), "held by a's budget, though the journal has refused nothing yet");
        assertEquals(0, queue.heldByKeys(), "a has no concurrency bound");
        queue.done(a.get(0).id(), TaskQueue.Stage.CLAIMED);
        assertEquals(List.of(a.get(2).id()), ids(queue.pollAhead(10)), "one out, the next in");
        assertEquals(
                queue.counts().accepted() - queue.counts().finished(),
                queue.counts().unfinished());
    }
}
