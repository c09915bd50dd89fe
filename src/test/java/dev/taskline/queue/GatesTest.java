package dev.taskline.queue;

import static dev.taskline.queue.Queues.*;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.ClaimGate;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

class GatesTest {

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
        AtomicInteger told = listen(queue).available;
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
        AtomicInteger told = listen(queue).available;
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

    @Test
    void gates_hold_a_keys_tasks_aside_beyond_its_bound_and_refill_the_line_as_they_come_back() {
        QueueConfig config = keyed(4, 1, java.util.Map.of()).config();
        WaitingLine line = new WaitingLine(Order.of(0), false, t -> 1);
        Gates gates = new Gates(config, Order.of(0), line);
        Task first = keyedTask("k", 0, 1);
        Task second = keyedTask("k", 0, 2);
        gates.line(first);
        gates.line(second);
        assertEquals(1, line.size());
        assertEquals(1, gates.aside());
        assertEquals(1, gates.heldByKeys());
        Task out = gates.out(line.poll());
        assertEquals(first.id(), out.id());
        assertEquals(0, line.size(), "the key's one task is out: its next waits aside still");
        assertTrue(gates.back(out.id()), "it came back: the next goes in line");
        assertEquals(second.id(), line.peek().id());
        assertEquals(0, gates.aside());
    }

    @Test
    void gates_name_what_the_journal_must_check_and_nothing_for_an_ungated_queue() {
        Gates open = new Gates(queue(10).config(), Order.of(0), new WaitingLine(Order.of(0), false, t -> 1));
        assertNull(open.gate(task(0, 1)));
        assertFalse(open.any());
        Gates rated = new Gates(rated(2, 5, true).config(), Order.of(0), new WaitingLine(Order.of(0), false, t -> 1));
        ClaimGate gate = rated.gate(keyedTask("k", 0, 1));
        assertEquals("k", gate.bucket());
        assertEquals(5, gate.rateTasks());
        assertEquals("", rated.gate(task(0, 1)).bucket(), "a task without a key spends the budget of those without");
    }
}
