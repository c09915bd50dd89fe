package dev.taskline.queue;

import static dev.taskline.queue.Queues.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.Task;
import dev.taskline.queue.Reservation.Refusal;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class CustodyTest {

    @Test
    void a_reservation_holds_its_ids_so_page_in_skips_them() {
        TaskQueue queue = queue(5);
        UUID id = UUID.randomUUID();
        assertRoom(null, reserve(queue, List.of(id), null));
        assertTrue(queue.heldIds().contains(id));
        assertEquals(0, queue.offer(List.of(task(id, 0, 1))), "page-in must not load a second copy");
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
        AtomicInteger wakeUps = listen(queue).available;
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
    void custody_holds_an_id_once_and_counts_it_for_its_tenant_until_it_is_released() {
        Custody custody = new Custody(2);
        UUID a = UUID.randomUUID();
        UUID b = UUID.randomUUID();
        assertTrue(custody.hold(a, "acme"));
        assertFalse(custody.hold(a, "acme"), "held already");
        assertTrue(custody.hold(b, null));
        assertEquals(1, custody.tenantHeld("acme"));
        assertTrue(custody.tenantFits("acme", 1));
        assertFalse(custody.tenantFits("acme", 2));
        assertTrue(custody.tenantFits(null, 100), "no tenant, no limit");
        custody.release(a);
        assertFalse(custody.holds(a));
        assertEquals(0, custody.tenantHeld("acme"));
        assertEquals(List.of(b), custody.ids());
    }

    @Test
    void a_tenant_named_empty_is_a_tenant_not_the_absence_of_one() {
        Custody custody = new Custody(1);
        UUID a = UUID.randomUUID();
        custody.hold(a, "");
        assertEquals(1, custody.tenantHeld(""));
        assertFalse(custody.tenantFits("", 1));
        custody.release(a);
        assertEquals(0, custody.tenantHeld(""));
    }
}
