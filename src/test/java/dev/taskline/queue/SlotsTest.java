package dev.taskline.queue;

import static dev.taskline.queue.Queues.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.queue.Reservation.Refusal;
import java.time.Duration;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class SlotsTest {

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
        AtomicInteger told = listen(queue).available;
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

    @Test
    void slots_count_each_stage_and_claims_ahead_take_no_slot_until_started() {
        Slots slots = new Slots(2, false);
        slots.claimAhead(1);
        assertEquals(2, slots.free());
        assertEquals(3, slots.claimRoom());
        slots.handedOut(3, TaskQueue.Stage.CLAIMED);
        assertEquals(-1, slots.free());
        assertEquals(1, slots.aheadOfSlots());
        assertEquals(0, slots.claimRoom());
        slots.started();
        slots.returned();
        assertEquals(0, slots.free(), "a returned handler's slot is free; its end is being journaled");
        assertEquals(1, slots.finishing());
        slots.leave(TaskQueue.Stage.FINISHING);
        slots.leave(TaskQueue.Stage.CLAIMED);
        assertEquals(1, slots.free());
        assertEquals(3, slots.claiming(), "claims in flight are counted until they return");
    }

    @Test
    void a_remote_queue_claims_nothing_ahead_and_its_dispatched_tasks_run_at_once() {
        Slots slots = new Slots(2, true);
        slots.claimAhead(5);
        assertEquals(2, slots.claimRoom());
        slots.dispatching(1);
        assertEquals(1, slots.free());
        Task task = task(0, 1);
        slots.dispatched(List.of(new TaskQueue.Dispatched(task, null)));
        assertEquals(1, slots.running());
        assertEquals(0, slots.claimed());
        assertEquals(task, slots.pollDispatched().task());
        assertNull(slots.pollDispatched());
    }

    @Test
    void a_pause_says_whether_it_changed_anything() {
        Slots slots = new Slots(1, false);
        assertTrue(slots.pause(true));
        assertFalse(slots.pause(true));
        assertTrue(slots.paused());
        assertTrue(slots.pause(false));
    }
}
