package dev.taskline.model;

import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.time.Instant;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/** Which attempts read a task's journaled steps before their handler starts: a read per first attempt costs a round trip. */
class ReadsStepsTest {

    private static final Instant NOW = Instant.parse("2026-01-01T00:00:00Z");

    private static Task fresh() {
        return Task.builder(UUID.randomUUID(), "q", "t").build();
    }

    @Test
    void a_task_journaled_running_at_admission_starts_its_first_attempt_without_a_read() {
        Insert insert = Insert.waiting(fresh(), NOW).claimedBy("w", NOW.plusSeconds(60));
        assertFalse(insert.journaledTask().readsSteps(insert.lease()));
    }

    @Test
    void a_claimed_task_reads_its_steps_from_its_second_attempt_on() {
        Task task = fresh();
        assertFalse(task.readsSteps(new Lease(task.id(), "w", 1, 1)));
        Task retried = task.pendingAgain(1, 1, NOW.toEpochMilli());
        assertTrue(retried.readsSteps(new Lease(task.id(), "w", 2, 2)));
    }

    @Test
    void a_task_that_slept_reads_its_steps_in_any_attempt() {
        Task task = fresh().asDurable();
        assertTrue(task.readsSteps(new Lease(task.id(), "w", 1, 1)));
    }
}
