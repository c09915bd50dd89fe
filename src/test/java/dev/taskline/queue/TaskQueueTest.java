package dev.taskline.queue;

import static dev.taskline.queue.Queues.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.Task;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.Test;

class TaskQueueTest {

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
        queue.remove(queue.poll().id() == c.id() ? b.id() : c.id());
        assertBalanced(queue);
        TaskQueue.Counts counts = queue.counts();
        assertEquals(3, counts.accepted());
    }

    @Test
    void the_scheduled_set_hands_out_what_is_due_first_and_only_when_it_is_due() {
        Scheduled scheduled = new Scheduled();
        Task late = task(9, 200);
        Task early = task(0, 100);
        scheduled.add(late);
        scheduled.add(early);
        assertEquals(100, scheduled.nextDueMillis());
        assertNull(scheduled.pollDue(99));
        assertEquals(1, scheduled.dueAt(150));
        assertEquals(early, scheduled.pollDue(150));
        assertTrue(scheduled.remove(late.id()));
        assertEquals(Long.MAX_VALUE, scheduled.nextDueMillis());
    }

    @Test
    void work_that_comes_into_line_beyond_the_free_slots_is_told_and_a_wake_up_asks_only_for_free_slots() {
        TaskQueue queue = new TaskQueue(new QueueConfig("q", 2, 100, 30_000, 10_000));
        List<String> told = listen(queue).held;
        assertEquals(2, queue.startableNow());
        queue.offer(List.of(task(0, 1)));
        assertEquals(List.of(), told, "one task, two free slots: this node starts it");
        assertEquals(1, queue.startableNow(), "the task in line takes one of the free slots");
        queue.offer(List.of(task(0, 2), task(0, 3)));
        assertEquals(List.of("q"), told, "three in line, two slots: the others are told");
        assertEquals(0, queue.startableNow());
        queue.poll();
        queue.poll();
        assertEquals(0, queue.startableNow(), "both slots run");
        queue.paused(true);
        queue.offer(List.of(task(0, 4)));
        assertEquals(List.of("q"), told, "a paused queue tells no one: every node holds it paused");
    }
}
