package dev.taskline.worker;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.handler.PermanentTaskException;
import dev.taskline.handler.SnoozeException;
import dev.taskline.model.Wait;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.TenantLimitException;
import dev.taskline.model.problem.TooManyBlockedException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.concurrent.atomic.AtomicInteger;
import org.junit.jupiter.api.Test;

/** Each rule of how an attempt ends, decided without a node or a journal. */
class EndingsTest {

    private static final Instant NOW = Instant.parse("2026-12-05T10:00:00Z");
    private static final AtomicInteger DRAWS = new AtomicInteger();
    /** Backoff 1 s doubling to 60 s; results up to 1 KiB; every draw 0.5, counted. */
    private static final Endings.Policy POLICY = new Endings.Policy(1_000, 60_000, 1_024, () -> {
        DRAWS.incrementAndGet();
        return 0.5;
    });

    private static final JsonObject RESULT = new JsonObject().put("ok", true);
    private static final Wait SLEEP = Wait.sleep("nap", NOW.plusSeconds(60));

    /** Attempt 2 of 3, nothing asked, nothing spawned. */
    private static Endings.Attempted second() {
        return new Endings.Attempted(2, 3, false, null, new JsonArray());
    }

    private static Endings.Attempted last() {
        return new Endings.Attempted(3, 3, false, null, new JsonArray());
    }

    private static Endings.Attempted cancelAsked() {
        return new Endings.Attempted(2, 3, true, null, new JsonArray());
    }

    private static End decide(Endings.Attempted attempted, Outcome outcome) {
        return Endings.decide(attempted, outcome, POLICY, NOW);
    }

    @Test
    void a_lost_lease_writes_nothing() {
        assertInstanceOf(End.Fenced.class, decide(cancelAsked(), new Outcome.LeaseLost()));
    }

    @Test
    void a_node_that_stops_hands_the_task_back_whatever_was_asked() {
        assertInstanceOf(End.Released.class, decide(cancelAsked(), new Outcome.Released()));
    }

    @Test
    void a_result_succeeds_with_what_the_handler_spawned_and_the_journal_does_not_weigh_a_cancel() {
        JsonArray spawned = new JsonArray().add(new JsonObject().put("type", "next"));
        End end = decide(new Endings.Attempted(1, 3, false, null, spawned), new Outcome.Succeeded(RESULT));
        assertEquals(new End.Succeeded(RESULT, spawned, false), end);
        assertTrue(((End.Succeeded) end).spawns());
    }

    @Test
    void a_result_after_a_cancel_was_asked_ends_cancelled_keeping_it() {
        assertEquals(new End.Cancelled(RESULT, null), decide(cancelAsked(), new Outcome.Succeeded(RESULT)));
    }

    @Test
    void a_result_the_journal_could_not_keep_is_dropped_from_a_cancel() {
        JsonObject big = new JsonObject().put("text", "x".repeat(2_000));
        assertEquals(new End.Cancelled(null, null), decide(cancelAsked(), new Outcome.Succeeded(big)));
    }

    @Test
    void a_result_past_its_bound_fails_for_good_even_with_attempts_left() {
        JsonObject big = new JsonObject().put("text", "x".repeat(2_000));
        End.Failed end = assertInstanceOf(End.Failed.class, decide(second(), new Outcome.Succeeded(big)));
        assertTrue(end.permanent());
        assertTrue(!end.cancelWins());
        assertTrue(end.error().getString("message").startsWith("the attempt's result cannot be kept"));
    }

    @Test
    void a_failure_after_a_cancel_was_asked_ends_cancelled_with_the_error() {
        End.Cancelled end = assertInstanceOf(
                End.Cancelled.class, decide(cancelAsked(), new Outcome.Failed(new IllegalStateException("boom"))));
        assertNull(end.result());
        assertEquals("boom", end.error().getString("message"));
    }

    @Test
    void a_handler_that_asked_to_wait_is_suspended_even_when_it_threw() {
        Endings.Attempted waiting = new Endings.Attempted(1, 1, false, SLEEP, new JsonArray());
        assertEquals(new End.Suspended(SLEEP), decide(waiting, new Outcome.Failed(new RuntimeException("x"))));
    }

    @Test
    void a_snooze_is_due_after_its_delay_and_spends_no_attempt() {
        End end = decide(last(), new Outcome.Failed(new SnoozeException(Duration.ofSeconds(30))));
        assertEquals(new End.Snoozed(NOW.plusSeconds(30)), end);
    }

    @Test
    void a_failure_with_attempts_left_is_retried_after_the_queues_backoff() {
        int before = DRAWS.get();
        End.RetryAt end = assertInstanceOf(
                End.RetryAt.class, decide(second(), new Outcome.Failed(new IllegalStateException("boom"))));
        // Attempt 2 failed: a ceiling of 2 s, drawn at 0.5.
        assertEquals(NOW.plusMillis(Backoff.delayMs(2, 1_000, 60_000, 0.5)), end.due());
        assertEquals(NOW.plusMillis(1_000), end.due());
        assertEquals("java.lang.IllegalStateException", end.error().getString("type"));
        assertEquals(before + 1, DRAWS.get());
    }

    @Test
    void a_failure_of_the_last_attempt_fails_for_good_and_draws_no_jitter() {
        int before = DRAWS.get();
        End end = decide(last(), new Outcome.Failed(new IllegalStateException("boom")));
        End.Failed failed = assertInstanceOf(End.Failed.class, end);
        assertTrue(!failed.permanent() && !failed.cancelWins());
        assertEquals(before, DRAWS.get());
    }

    @Test
    void a_permanent_failure_is_not_retried() {
        End.Failed end = assertInstanceOf(
                End.Failed.class, decide(second(), new Outcome.Failed(new PermanentTaskException("bad input"))));
        assertTrue(end.permanent());
        assertEquals("bad input", end.error().getString("message"));
    }

    @Test
    void a_timeout_is_retried_while_attempts_are_left_and_a_cancel_does_not_win_over_it() {
        End.RetryAt end = assertInstanceOf(End.RetryAt.class, decide(cancelAsked(), new Outcome.TimedOut(5_000)));
        assertEquals("timeout", end.error().getString("type"));
        assertEquals("the attempt ran longer than 5000 ms", end.error().getString("message"));
        End.Failed spent = assertInstanceOf(End.Failed.class, decide(last(), new Outcome.TimedOut(5_000)));
        assertTrue(!spent.permanent() && !spent.cancelWins());
    }

    @Test
    void a_remote_completion_succeeds_and_leaves_a_cancel_to_the_journal() {
        JsonArray spawn = new JsonArray();
        assertEquals(
                new End.Succeeded(RESULT, spawn, true),
                decide(Endings.Attempted.remote(1, 3), new Outcome.Completed(RESULT, spawn)));
    }

    @Test
    void a_remote_failure_is_retried_after_the_delay_it_asked_or_the_backoff() {
        JsonObject error = new JsonObject().put("type", "remote").put("message", "no");
        assertEquals(
                new End.RetryAt(NOW.plusMillis(250), error),
                decide(Endings.Attempted.remote(1, 3), new Outcome.Reported(error, true, 250L)));
        assertEquals(
                new End.RetryAt(NOW.plusMillis(500), error),
                decide(Endings.Attempted.remote(1, 3), new Outcome.Reported(error, true, null)));
    }

    @Test
    void a_remote_failure_without_retry_or_attempts_fails_and_a_cancel_wins_in_the_journal() {
        JsonObject error = new JsonObject().put("message", "no");
        assertEquals(
                new End.Failed(error, true, true),
                decide(Endings.Attempted.remote(1, 3), new Outcome.Reported(error, false, null)));
        assertEquals(
                new End.Failed(error, false, true),
                decide(Endings.Attempted.remote(3, 3), new Outcome.Reported(error, true, null)));
    }

    @Test
    void a_remote_worker_puts_a_task_back_at_once_or_snoozed() {
        assertInstanceOf(End.Released.class, decide(Endings.Attempted.remote(1, 1), new Outcome.PutBack(null)));
        assertEquals(
                new End.Snoozed(NOW.plusMillis(2_000)),
                decide(Endings.Attempted.remote(1, 1), new Outcome.PutBack(2_000L)));
    }

    @Test
    void a_remote_worker_suspends_on_its_wait() {
        assertEquals(new End.Suspended(SLEEP), decide(Endings.Attempted.remote(1, 1), new Outcome.Suspending(SLEEP)));
    }

    @Test
    void a_spawn_with_no_room_now_is_a_failure_like_any_and_one_that_breaks_a_rule_fails_for_good() {
        assertInstanceOf(
                End.RetryAt.class,
                Endings.spawnRefused(second(), new TenantLimitException("q", "t", 1, 1, 1, 1), POLICY, NOW));
        assertInstanceOf(
                End.Cancelled.class,
                Endings.spawnRefused(cancelAsked(), new TooManyBlockedException(1, 1, 1, "t"), POLICY, NOW));
        End.Failed invalid = assertInstanceOf(
                End.Failed.class,
                Endings.spawnRefused(second(), new InvalidTaskException("no such queue"), POLICY, NOW));
        assertTrue(invalid.permanent());
        assertEquals("no such queue", invalid.error().getString("message"));
        assertNull(Endings.spawnRefused(second(), new IllegalStateException("journal down"), POLICY, NOW));
    }

    @Test
    void an_end_the_journal_refused_fails_for_good_unless_a_cancel_wins() {
        End.Failed end = assertInstanceOf(End.Failed.class, Endings.refused("a NUL in the result"));
        assertTrue(end.permanent() && end.cancelWins());
        assertEquals(
                "the attempt's end could not be recorded: a NUL in the result",
                end.error().getString("message"));
    }
}
