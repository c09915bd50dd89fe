package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;

import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import java.time.Duration;
import java.util.Set;
import org.junit.jupiter.api.Test;

/**
 * A signed-out session is held by the journal until it would have expired: read by every node
 * meanwhile, gone from the live set after, and deleted by retention; signing out twice is one row.
 */
class JournalSessionRevocationsTest {

    @Test
    void a_revocation_is_live_until_its_session_would_have_expired_and_retention_deletes_it_then() throws Exception {
        Vertx vertx = Vertx.vertx();
        Pool pool = TestPostgres.journalPool(vertx);
        try {
            MutableClock clock = new MutableClock();
            JournalKeys keys = new JournalKeys(pool, clock);
            Journal journal = new Journal(pool, clock);
            await(keys.revokeSession("soon", clock.instant().plus(Duration.ofHours(1)), "reader"));
            await(keys.revokeSession("soon", clock.instant().plus(Duration.ofHours(1)), "reader"));
            await(keys.revokeSession("later", clock.instant().plus(Duration.ofHours(12)), null));
            assertEquals(Set.of("soon", "later"), await(keys.revokedSessions()).keySet());

            clock.advance(Duration.ofHours(2));
            assertEquals(
                    Set.of("later"), await(keys.revokedSessions()).keySet(), "the first session has expired anyway");
            await(journal.deleteOld(Duration.ofDays(7), 1000));
            assertEquals(
                    1L,
                    await(pool.query("SELECT count(*) FROM session_revocations").execute())
                            .iterator()
                            .next()
                            .getLong(0),
                    "retention deleted the expired one, and only it");
        } finally {
            await(pool.close());
            await(vertx.close());
        }
    }
}
