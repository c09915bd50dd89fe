package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.ClaimGate;
import dev.taskline.model.Event;
import dev.taskline.model.Expired;
import dev.taskline.model.GatedClaim;
import dev.taskline.model.Insert;
import dev.taskline.model.Lease;
import dev.taskline.model.Reason;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.model.TaskState;
import dev.taskline.model.TaskView;
import dev.taskline.model.TenantCounts;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * Deadlines of first starts at the journal, against a real PostgreSQL: no claim takes a task past
 * its deadline, whichever way it claims and whether or not the sweep has run yet; the sweep ends
 * such tasks expired, in batches; a started task's deadline no longer holds.
 */
class JournalDeadlineTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    private static Vertx vertx;
    private static Pool pool;
    private static JournalReads reads;
    private MutableClock clock;
    private Journal journal;

    @BeforeAll
    static void start() throws Exception {
        vertx = Vertx.vertx();
        pool = TestPostgres.journalPool(vertx);
        reads = new JournalReads(pool);
    }

    /**
     * A clock of each test's own, from the real time: task ids follow the latest clock any test in
     * the JVM made one with, so a clock moved hours ahead would date every later test's ids.
     */
    @BeforeEach
    void newClock() {
        clock = new MutableClock();
        journal = new Journal(pool, clock);
    }

    @AfterAll
    static void stop() throws Exception {
        await(pool.close());
        await(vertx.close());
    }

    /** A task of its own queue, due now, that must start within {@code within}. */
    private UUID newTask(String queue, Duration within, String key) throws Exception {
        UUID id = TaskIds.next(clock);
        Instant now = clock.instant();
        await(journal.insert(List.of(Insert.waiting(
                Task.builder(id, queue, "sleep").runAt(now).concurrencyKey(key).build(), now, now.plus(within)))));
        return id;
    }

    private static String queue() {
        return "q-" + UUID.randomUUID();
    }

    @Test
    void no_claim_takes_a_task_past_its_deadline_even_before_the_sweep_has_run() throws Exception {
        String queue = queue();
        UUID plain = newTask(queue, Duration.ofSeconds(1), null);
        UUID keyed = newTask(queue, Duration.ofSeconds(1), "model-a");
        assertEquals(2, await(journal.pendingCount(queue)));
        clock.advance(Duration.ofSeconds(2));

        assertNull(await(journal.claim(plain, 0, "w1", LEASE)), "a worker's claim");
        GatedClaim claim =
                await(journal.claimGated(keyed, 0, "w1", LEASE, new ClaimGate(queue, "model-a", 2, "", 10, 1_000)));
        assertNull(claim.lease(), "a gated claim (its key's bound, a rate limit)");
        assertNull(claim.refused(), "refused for its deadline, not for its key or its rate");
        assertEquals(0, await(journal.pendingCount(queue)), "not counted as waiting work to page in");
        assertEquals(List.of(), await(journal.pageIn(queue, List.of(), 10, 0.1, false)));
        assertEquals(List.of(), await(journal.pageIn(queue, List.of(), 10, 0.1, true)));
        assertEquals(TaskState.PENDING, await(reads.state(plain)), "the sweep has not run: still pending");
    }

    @Test
    void a_claim_at_or_before_the_deadline_takes_the_task() throws Exception {
        String queue = queue();
        UUID id = newTask(queue, Duration.ofSeconds(1), null);
        List<Task> paged = await(journal.pageIn(queue, List.of(), 10, 0.1, false));
        assertEquals(
                clock.instant().plusSeconds(1).toEpochMilli(),
                paged.get(0).startByMillis(),
                "read back with its deadline, so that the queue does not claim it ahead of a slot");
        assertTrue(paged.get(0).deadlineHolds());
        clock.advance(Duration.ofSeconds(1));
        assertNotNull(await(journal.claim(id, 0, "w1", LEASE)), "at the deadline itself it may still start");
    }

    @Test
    void the_sweep_ends_overdue_tasks_expired_in_batches_and_leaves_the_others() throws Exception {
        // The sweep is journal-wide: what the other tests left with a deadline goes first, by a clock
        // a minute ahead (which makes no task id, so it dates nothing).
        Journal ahead = new Journal(pool, new MutableClock(clock.instant().plusSeconds(60)));
        while (!await(ahead.expireOverdue(1000)).isEmpty()) {
            // until none is left
        }
        String queue = queue();
        UUID first = newTask(queue, Duration.ofSeconds(1), null);
        UUID second = newTask(queue, Duration.ofSeconds(2), null);
        UUID third = newTask(queue, Duration.ofSeconds(3), null);
        UUID later = newTask(queue, Duration.ofMinutes(10), null);
        clock.advance(Duration.ofSeconds(5));
        Instant sweptAt = clock.instant();

        List<Expired> batch = await(journal.expireOverdue(2));
        assertEquals(
                List.of(new Expired(first, queue), new Expired(second, queue)),
                batch,
                "soonest deadline first, at most the batch");
        assertEquals(List.of(new Expired(third, queue)), await(journal.expireOverdue(2)));
        assertEquals(List.of(), await(journal.expireOverdue(2)));

        TaskView expired = await(reads.task(first));
        assertEquals(TaskState.EXPIRED, expired.state());
        assertEquals(sweptAt.truncatedTo(ChronoUnit.MICROS), expired.finishedAt());
        assertNull(expired.startedAt(), "it never started");
        Event last = expired.history().get(expired.history().size() - 1);
        assertEquals(TaskState.PENDING, last.from());
        assertEquals(TaskState.EXPIRED, last.to());
        assertEquals(Reason.EXPIRED, last.reason());
        assertTrue(last.detail().containsKey("startBy"), last.detail()::encode);
        assertEquals(TaskState.PENDING, await(reads.state(later)));
        assertNull(await(journal.claim(first, 0, "w1", LEASE)), "expired is the end");
    }

    @Test
    void a_task_that_started_is_not_held_to_its_deadline_again() throws Exception {
        String queue = queue();
        UUID id = newTask(queue, Duration.ofSeconds(1), null);
        Lease lease = await(journal.claim(id, 0, "w1", LEASE));
        assertEquals(TaskState.PENDING, await(journal.retryAt(lease, clock.instant(), new JsonObject().put("e", 1))));
        clock.advance(Duration.ofSeconds(5));
        assertEquals(
                List.of(),
                await(journal.expireOverdue(100)).stream()
                        .filter(e -> e.id().equals(id))
                        .toList());
        assertNotNull(await(journal.claim(id, lease.version(), "w1", LEASE)), "its second attempt runs, late or not");
    }

    @Test
    void a_first_attempt_handed_back_before_its_handler_ran_keeps_its_deadline() throws Exception {
        String queue = queue();
        UUID id = newTask(queue, Duration.ofSeconds(1), null);
        Lease lease = await(journal.claim(id, 0, "w1", LEASE));
        // A pause or a drain hands a task claimed ahead back with its attempt given back.
        assertEquals(TaskState.PENDING, await(journal.handBackUnstarted(lease)));
        clock.advance(Duration.ofSeconds(2));
        assertNull(await(journal.claim(id, lease.version() + 1, "w1", LEASE)));
        assertEquals(
                List.of(new Expired(id, queue)),
                await(journal.expireOverdue(100)).stream()
                        .filter(e -> e.id().equals(id))
                        .toList());
    }

    @Test
    void an_attempt_given_back_after_its_handler_ran_drops_the_deadline_though_the_count_is_back_at_zero()
            throws Exception {
        String queue = queue();
        UUID snoozed = newTask(queue, Duration.ofSeconds(1), null);
        UUID released = newTask(queue, Duration.ofSeconds(1), null);
        Lease first = await(journal.claim(snoozed, 0, "w1", LEASE));
        Lease second = await(journal.claim(released, 0, "w1", LEASE));
        // A snooze past the deadline, and a release of a running handler (a drain's grace ran out).
        Instant later = clock.instant().plusSeconds(10);
        assertEquals(TaskState.PENDING, await(journal.snoozeUntil(first, later)));
        assertEquals(TaskState.PENDING, await(journal.release(second)));
        clock.advance(Duration.ofSeconds(11));
        assertEquals(
                List.of(),
                await(journal.expireOverdue(100)).stream()
                        .filter(e -> e.id().equals(snoozed) || e.id().equals(released))
                        .toList(),
                "they did start: none expires");
        Lease again = await(journal.claim(snoozed, first.version(), "w1", LEASE));
        assertNotNull(again, "the snoozed task runs again");
        assertEquals(1, again.attempt(), "its snooze did not count");
        assertNotNull(await(journal.claim(released, second.version() + 1, "w1", LEASE)));
        assertNull(await(reads.task(snoozed)).startBy());
    }

    @Test
    void a_retried_expired_task_loses_its_deadline_and_runs() throws Exception {
        String queue = queue();
        UUID id = newTask(queue, Duration.ofSeconds(1), null);
        clock.advance(Duration.ofSeconds(2));
        await(journal.expireOverdue(100));
        List<Task> moved = await(journal.retry(List.of(id), null));
        assertEquals(List.of(id), moved.stream().map(Task::id).toList());
        TaskView back = await(reads.task(id));
        assertEquals(TaskState.PENDING, back.state());
        assertNull(back.startBy());
        assertEquals(
                Reason.RETRIED, back.history().get(back.history().size() - 1).reason());
        clock.advance(Duration.ofMinutes(5));
        assertNotNull(await(journal.claim(id, moved.get(0).leaseVersion(), "w1", LEASE)));
    }

    @Test
    void a_tenants_counts_show_an_expired_task_as_finished_and_expired() throws Exception {
        String queue = queue();
        UUID id = TaskIds.next(clock);
        Instant now = clock.instant();
        await(journal.insert(List.of(Insert.waiting(
                Task.builder(id, queue, "sleep").runAt(now).tenant("acme-" + id).build(), now, now.plusSeconds(1)))));
        clock.advance(Duration.ofSeconds(2));
        await(journal.expireOverdue(100));
        List<TenantCounts> counts = await(reads.tenantCounts("acme-" + id, clock.instant()));
        assertEquals(List.of(new TenantCounts(queue, 0, 0, 0, 1, 1, 1)), counts);
    }

    @Test
    void retention_deletes_expired_tasks_as_it_deletes_other_finished_ones() throws Exception {
        String queue = queue();
        UUID id = newTask(queue, Duration.ofSeconds(1), null);
        clock.advance(Duration.ofSeconds(2));
        await(journal.expireOverdue(100));
        clock.advance(Duration.ofHours(2));
        assertTrue(await(journal.deleteOld(Duration.ofHours(1), 1000)) >= 1);
        assertNull(await(reads.task(id)));
    }
}
