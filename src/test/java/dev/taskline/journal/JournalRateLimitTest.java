package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertNotNull;
import static org.junit.jupiter.api.Assertions.assertNull;

import dev.taskline.model.ClaimGate;
import dev.taskline.model.GatedClaim;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;
import org.junit.jupiter.api.AfterAll;
import org.junit.jupiter.api.BeforeAll;
import org.junit.jupiter.api.Test;

/**
 * The rate branch of claim_gated against a real PostgreSQL, each node a journal with a clock of its
 * own: the window's count, when a spent budget frees its next start, and pruning that a node whose
 * clock runs ahead cannot turn into a window too many for a node whose clock is behind.
 */
class JournalRateLimitTest {

    private static final Duration LEASE = Duration.ofSeconds(30);

    private static Vertx vertx;
    private static Pool pool;

    @BeforeAll
    static void start() throws Exception {
        vertx = Vertx.vertx();
        pool = TestPostgres.journalPool(vertx);
    }

    @AfterAll
    static void stop() throws Exception {
        await(pool.close());
        await(vertx.close());
    }

    private static List<UUID> newTasks(Journal journal, String queue, int n) throws Exception {
        List<UUID> ids = new ArrayList<>();
        List<Insert> inserts = new ArrayList<>();
        Instant now = journal.clock().instant().minusSeconds(60);
        for (int i = 0; i < n; i++) {
            UUID id = TaskIds.next(journal.clock());
            ids.add(id);
            inserts.add(
                    Insert.waiting(Task.builder(id, queue, "sleep").runAt(now).build()));
        }
        await(journal.insert(inserts));
        return ids;
    }

    private static GatedClaim claim(Journal journal, UUID id, String queue, int tasks, long perMs) throws Exception {
        return await(journal.claimGated(id, 0, "w", LEASE, new ClaimGate(queue, null, 0, "", tasks, perMs)));
    }

    @Test
    void a_spent_window_says_when_its_first_start_leaves_it_and_takes_the_next_then() throws Exception {
        MutableClock clock = new MutableClock(Instant.parse("2026-12-01T10:00:00Z"));
        Journal journal = new Journal(pool, clock);
        String queue = "q-" + UUID.randomUUID();
        List<UUID> ids = newTasks(journal, queue, 3);
        Instant first = clock.instant();
        assertNotNull(claim(journal, ids.get(0), queue, 2, 1_000).lease());
        clock.advance(Duration.ofMillis(100));
        assertNotNull(claim(journal, ids.get(1), queue, 2, 1_000).lease());
        clock.advance(Duration.ofMillis(100));
        GatedClaim refused = claim(journal, ids.get(2), queue, 2, 1_000);
        assertNull(refused.lease());
        assertEquals(GatedClaim.Refusal.RATE_FULL, refused.refused());
        assertEquals(first.plusMillis(1_000), refused.retryAt(), "the first start is a window old then");
        clock.advance(Duration.ofMillis(799));
        assertEquals(
                GatedClaim.Refusal.RATE_FULL,
                claim(journal, ids.get(2), queue, 2, 1_000).refused(),
                "a millisecond short of it");
        clock.advance(Duration.ofMillis(1));
        assertNotNull(claim(journal, ids.get(2), queue, 2, 1_000).lease());
    }

    @Test
    void a_node_whose_clock_runs_ahead_prunes_nothing_that_a_node_behind_still_counts() throws Exception {
        Instant t0 = Instant.parse("2026-12-01T11:00:00Z");
        Journal behind = new Journal(pool, new MutableClock(t0));
        MutableClock aheadClock = new MutableClock(t0.plusMillis(1_500));
        Journal ahead = new Journal(pool, aheadClock);
        String queue = "q-" + UUID.randomUUID();
        List<UUID> ids = newTasks(behind, queue, 4);
        assertNotNull(claim(behind, ids.get(0), queue, 2, 1_000).lease());
        assertNotNull(claim(behind, ids.get(1), queue, 2, 1_000).lease());
        // Its window is (t0 + 500 ms, t0 + 1500 ms]: the two starts at t0 are out of it, so it starts one.
        assertNotNull(claim(ahead, ids.get(2), queue, 2, 1_000).lease());
        // The other node, 600 ms behind it, still has them in its window: the budget is spent there.
        Journal laggard = new Journal(pool, new MutableClock(t0.plusMillis(900)));
        GatedClaim refused = claim(laggard, ids.get(3), queue, 2, 1_000);
        assertEquals(GatedClaim.Refusal.RATE_FULL, refused.refused(), "the starts at t0 were not pruned");
    }
}
