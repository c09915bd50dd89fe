package dev.taskline.admission;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertInstanceOf;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.ConfigLoader;
import dev.taskline.config.TasklineConfig;
import dev.taskline.handler.HandlerRegistry;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.problem.DeadlineUnmeetableException;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.queue.QueueRegistry;
import dev.taskline.queue.TaskQueue;
import dev.taskline.testing.MutableClock;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * The rules a deadline must keep, and the refusal of a paused queue, decided before anything is
 * reserved or journaled: this admission has no journal at all, so a submission that got that far
 * would fail with something else than the refusal asked for.
 */
class DeadlineAdmissionTest {

    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-01T09:00:00Z"));
    private QueueRegistry queues;
    private Admission admission;

    @BeforeEach
    void setUp() {
        TasklineConfig config = ConfigLoader.fromJson("{\"queues\": {\"default\": {\"slots\": 2}}}", Map.of());
        queues = new QueueRegistry(config.queues().values());
        TasklineMetrics metrics = new TasklineMetrics(clock);
        queues.all().forEach(metrics::register);
        admission = new Admission(config, queues, HandlerRegistry.fromClasspath(), null, metrics, clock);
    }

    private static Submission task(Instant runAt, Instant startBy, Long startWithinMs) {
        return new Submission(
                "sleep", new JsonObject(), null, null, null, null, null, runAt, null, startBy, startWithinMs);
    }

    private static Throwable failure(Future<?> answer) {
        assertTrue(answer.failed(), "refused at once");
        return answer.cause();
    }

    private void assertInvalid(Submission submission, String detail) {
        Throwable e = failure(admission.submit(submission, null, null));
        assertInstanceOf(InvalidTaskException.class, e);
        assertTrue(e.getMessage().contains(detail), e.getMessage());
    }

    @Test
    void a_deadline_is_one_of_startBy_and_startWithinMs_ahead_and_not_before_the_task_is_due() {
        Instant now = clock.instant();
        assertInvalid(task(null, now.plusSeconds(5), 1000L), "give startBy or startWithinMs, not both");
        assertInvalid(task(null, null, 0L), "startWithinMs must be from 1 to");
        assertInvalid(task(null, null, -1L), "startWithinMs must be from 1 to");
        assertInvalid(task(null, null, Admission.MAX_DELAY_MS + 1), "startWithinMs must be from 1 to");
        assertInvalid(task(null, now, null), "startBy must be in the future");
        assertInvalid(task(null, now.minusMillis(1), null), "startBy must be in the future");
        assertInvalid(
                task(now.plusSeconds(60), now.plusSeconds(59), null), "startBy must not be before the task is due");
        TaskQueue queue = queues.get("default");
        assertEquals(queue.config().capacity(), queue.room(), "nothing was reserved");
    }

    @Test
    void in_a_batch_the_refusal_names_the_task() {
        Instant now = clock.instant();
        Throwable e =
                failure(admission.submitBatch(List.of(task(null, null, null), task(null, now, null)), null, null));
        assertInstanceOf(InvalidTaskException.class, e);
        assertTrue(e.getMessage().startsWith("tasks[1].startBy must be in the future"), e.getMessage());
    }

    @Test
    void a_paused_queue_refuses_a_deadline_due_now_whole_and_reserves_nothing() {
        TaskQueue queue = queues.get("default");
        queue.paused(true);
        Throwable e =
                failure(admission.submitBatch(List.of(task(null, null, null), task(null, null, 60_000L)), null, null));
        DeadlineUnmeetableException refusal = assertInstanceOf(DeadlineUnmeetableException.class, e);
        assertTrue(refusal.paused());
        assertEquals(1, refusal.index());
        assertEquals(clock.instant().plusSeconds(60), refusal.startBy());
        assertEquals(queue.config().capacity(), queue.room(), "nothing was reserved");
        assertEquals(0, queue.counts().accepted());
    }
}
