package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.Event;
import dev.taskline.model.Heartbeat;
import dev.taskline.model.Insert;
import dev.taskline.model.Lease;
import dev.taskline.model.Reason;
import dev.taskline.model.Released;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.model.TaskState;
import dev.taskline.model.TaskView;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/** Leases, fencing and takeover at the journal, against a real PostgreSQL. */
class JournalFencingTest {

    private static final Duration LEASE = Duration.ofSeconds(5);

    private static Vertx vertx;
    private static Pool pool;
    private static MutableClock clock;
    private static Journal journal;
    private static JournalReads reads;

    @BeforeAll
    static void start() throws Exception {
        vertx = Vertx.vertx();
        pool = TestPostgres.journalPool(vertx);
        clock = new MutableClock();
        journal = new Journal(pool, clock);
        reads = new JournalReads(pool);
    }

    @AfterAll
    static void stop() throws Exception {
        await(pool.close());
        await(vertx.close());
    }

    private UUID newTask() throws Exception {
        UUID id = TaskIds.next(clock);
        await(journal.insert(List.of(Insert.waiting(
                Task.builder(id, "default", "sleep").runAt(clock.instant()).build()))));
        return id;
    }

    @Test
    void migrations_are_applied_once() throws Exception {
        assertEquals(0, await(Migrator.migrate(vertx, pool)));
    }

    @Test
    void a_claim_takes_the_next_lease_version_and_counts_an_attempt() throws Exception {
        UUID id = newTask();
        Lease lease = await(journal.claim(id, 0, "w1", LEASE));
        assertNotNull(lease);
        assertEquals(1, lease.version());
        assertEquals(1, lease.attempt());
        TaskView task = await(reads.task(id));
        assertEquals(TaskState.RUNNING, task.state());
        assertEquals("w1", task.workerId());
    }

    @Test
    void a_second_claim_of_the_same_version_gets_nothing() throws Exception {
        UUID id = newTask();
        assertNotNull(await(journal.claim(id, 0, "w1", LEASE)));
        assertNull(await(journal.claim(id, 0, "w2", LEASE)));
    }

    @Test
    void a_lapsed_lease_is_taken_over_and_the_old_workers_writes_are_refused() throws Exception {
        UUID id = newTask();
        Lease old = await(journal.claim(id, 0, "w1", LEASE));
        long fencedBefore = journal.fencedWrites();

        clock.advance(LEASE.plusSeconds(1));
        List<Released> released = await(journal.releaseExpired(100));
        assertTrue(released.stream().anyMatch(r -> r.id().equals(id)), "the lapsed lease is released");
        TaskView pending = await(reads.task(id));
        assertEquals(TaskState.PENDING, pending.state());
        assertEquals(2, pending.leaseVersion());

        Lease fresh = await(journal.claim(id, 2, "w2", LEASE));
        assertEquals(3, fresh.version());
        assertEquals(2, fresh.attempt());

        assertEquals(Heartbeat.LOST, await(journal.heartbeat(old, LEASE)), "stale heartbeat");
        assertFalse(await(journal.progress(old, 50, "stale")), "stale progress");
        assertNull(await(journal.succeed(old, new JsonObject().put("by", "w1"))), "stale result");
        assertEquals(fencedBefore + 3, journal.fencedWrites());

        assertEquals(TaskState.SUCCEEDED, await(journal.succeed(fresh, new JsonObject().put("by", "w2"))));
        TaskView done = await(reads.task(id));
        assertEquals(TaskState.SUCCEEDED, done.state());
        assertEquals("w2", ((JsonObject) done.result()).getString("by"));
        assertNull(done.progressMessage(), "the stale progress never landed");

        List<Event> history = done.history();
        assertEquals(
                List.of(Reason.SUBMITTED, Reason.CLAIMED, Reason.LEASE_EXPIRED, Reason.CLAIMED, Reason.SUCCEEDED),
                history.stream().map(Event::reason).toList());
        Event takeover = history.get(2);
        assertEquals("w1", takeover.detail().getString("previousWorker"));
        assertEquals(1, takeover.detail().getLong("previousLeaseVersion"));
    }

    @Test
    void a_task_whose_lease_keeps_lapsing_ends_failed_once_its_takeovers_are_spent() throws Exception {
        UUID id = newTask(); // one attempt, and Journal.MOST_LAPSES takeovers past it
        long version = 0;
        for (int attempt = 1; attempt <= 1 + Journal.MOST_LAPSES; attempt++) {
            Lease lease = await(journal.claim(id, version, "w" + attempt, LEASE));
            assertNotNull(lease, "claim " + attempt);
            assertEquals(attempt, lease.attempt());
            clock.advance(LEASE.plusSeconds(1));
            Released released = await(journal.releaseExpired(100)).stream()
                    .filter(r -> r.id().equals(id))
                    .findFirst()
                    .orElseThrow();
            TaskView task = await(reads.task(id));
            version = task.leaseVersion();
            if (attempt < 1 + Journal.MOST_LAPSES) {
                assertFalse(released.failed());
                assertEquals(TaskState.PENDING, task.state(), "a crash now and then is taken over");
            } else {
                assertTrue(released.failed());
                assertEquals(TaskState.FAILED, task.state(), "what kills every holder is not claimed for ever");
                assertEquals("lease_expired", ((JsonObject) task.error()).getString("type"));
                assertNotNull(task.finishedAt());
                assertEquals(
                        Reason.LEASE_EXPIRED,
                        task.history().get(task.history().size() - 1).reason());
            }
        }
    }

    @Test
    void a_result_is_committed_at_most_once() throws Exception {
        UUID id = newTask();
        Lease lease = await(journal.claim(id, 0, "w1", LEASE));
        assertEquals(TaskState.SUCCEEDED, await(journal.succeed(lease, new JsonObject().put("n", 1))));
        assertNull(await(journal.succeed(lease, new JsonObject().put("n", 2))));
        assertEquals(1, ((JsonObject) await(reads.task(id)).result()).getInteger("n"));
    }

    @Test
    void a_heartbeat_keeps_a_lease_alive_past_its_first_deadline() throws Exception {
        UUID id = newTask();
        Lease lease = await(journal.claim(id, 0, "w1", LEASE));
        clock.advance(LEASE.minusSeconds(1));
        assertEquals(Heartbeat.HELD, await(journal.heartbeat(lease, LEASE)));
        clock.advance(Duration.ofSeconds(2)); // past the first deadline, inside the renewed one
        List<Released> released = await(journal.releaseExpired(100));
        assertFalse(released.stream().anyMatch(r -> r.id().equals(id)));
        assertEquals(TaskState.SUCCEEDED, await(journal.succeed(lease, new JsonObject())));
    }

    @Test
    void page_in_skips_held_ids_and_orders_by_priority_then_age() throws Exception {
        String queue = "q-" + UUID.randomUUID();
        UUID low = TaskIds.next(clock);
        UUID high = TaskIds.next(clock);
        UUID held = TaskIds.next(clock);
        await(journal.insert(List.of(
                Insert.waiting(Task.builder(low, queue, "sleep")
                        .priority(0)
                        .runAt(clock.instant())
                        .build()),
                Insert.waiting(Task.builder(high, queue, "sleep")
                        .priority(5)
                        .runAt(clock.instant())
                        .build()),
                Insert.waiting(Task.builder(held, queue, "sleep")
                        .priority(9)
                        .runAt(clock.instant())
                        .build()))));
        List<Task> page = await(journal.pageIn(queue, List.of(held), 10, 0.0, false));
        assertEquals(List.of(high, low), page.stream().map(Task::id).toList());
    }
}
