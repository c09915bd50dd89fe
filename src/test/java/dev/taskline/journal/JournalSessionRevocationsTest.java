package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.SignedOut;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Set;
import org.junit.jupiter.api.AfterEach;
import org.junit.jupiter.api.BeforeEach;
import org.junit.jupiter.api.Test;

/**
 * A signed-out session is held by the journal until it would have expired: read by every node
 * meanwhile, gone from the live set after, and deleted by retention; signing out twice is one row.
 */
class JournalSessionRevocationsTest {

    private static final Duration TTL = Duration.ofHours(12);

    private Vertx vertx;
    private Pool pool;
    private final MutableClock clock = new MutableClock(Instant.parse("2026-12-05T10:00:00Z"));
    private JournalKeys keys;

    @BeforeEach
    void start() throws Exception {
        vertx = Vertx.vertx();
        pool = TestPostgres.journalPool(vertx); // a journal of its own for each test
        keys = new JournalKeys(pool, clock);
    }

    @AfterEach
    void stop() throws Exception {
        await(pool.close());
        await(vertx.close());
    }

    @Test
    void a_revocation_is_live_until_its_session_would_have_expired_and_retention_deletes_it_then() throws Exception {
        Journal journal = new Journal(pool, clock);
        await(keys.revokeSession("soon", clock.instant().plus(Duration.ofHours(1)), "reader", 1000, TTL));
        await(keys.revokeSession("soon", clock.instant().plus(Duration.ofHours(1)), "reader", 1000, TTL));
        await(keys.revokeSession("later", clock.instant().plus(Duration.ofHours(12)), null, 1000, TTL));
        assertEquals(
                Set.of("soon", "later"),
                await(keys.revokedSessions()).sessions().keySet());

        clock.advance(Duration.ofHours(2));
        assertEquals(
                Set.of("later"),
                await(keys.revokedSessions()).sessions().keySet(),
                "the first session has expired anyway");
        await(journal.deleteOld(Duration.ofDays(7), 1000));
        assertEquals(1L, count(), "retention deleted the expired one, and only it");
    }

    @Test
    void a_key_past_its_bound_of_sign_outs_signs_out_all_its_older_sessions_in_one_row() throws Exception {
        Instant expires = clock.instant().plus(TTL);
        for (int i = 0; i < 3; i++) {
            await(keys.revokeSession("looping-" + i, expires, "looper", 3, TTL));
        }
        await(keys.revokeSession("other", expires, "other-key", 3, TTL));
        assertEquals(4, await(keys.revokedSessions()).sessions().size());

        clock.advance(Duration.ofMinutes(5));
        await(keys.revokeSession("looping-3", expires.plus(Duration.ofMinutes(5)), "looper", 3, TTL));
        SignedOut now = await(keys.revokedSessions());
        assertEquals(
                Set.of("looping-3", "other"),
                now.sessions().keySet(),
                "the floor stands for the looper's older sign-outs; this one and another key's stay");
        assertEquals(Map.of("looper", clock.instant()), now.keysBefore());
        assertEquals(3L, count(), "rows held stay within the bound per key");

        for (int i = 4; i < 40; i++) {
            await(keys.revokeSession("looping-" + i, expires, "looper", 3, TTL));
        }
        assertTrue(count() <= 3 + 1 + 1, "at most the bound, the floor and the other key's row");

        clock.advance(TTL.plus(Duration.ofMinutes(10)));
        assertTrue(
                await(keys.revokedSessions()).keysBefore().isEmpty(), "the floor lapses with the sessions it covers");
    }

    private long count() throws Exception {
        return await(pool.query("SELECT count(*) FROM session_revocations").execute())
                .iterator()
                .next()
                .getLong(0);
    }
}
