package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.config.TasklineConfig;
import dev.taskline.testing.MutableClock;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Tuple;
import java.time.Instant;
import java.time.ZoneOffset;
import java.util.UUID;
import org.junit.jupiter.api.Test;

/**
 * An event reaching many waiting tasks copies its data to at most a bounded number of them per
 * statement, and still reaches every one, in one transaction: each round's woken tasks wait no more,
 * so the next round reaches the next ones.
 */
class EventDeliveryBoundTest {

    @Test
    void an_event_reaches_every_waiter_in_rounds_of_at_most_the_bound() throws Exception {
        Vertx vertx = Vertx.vertx();
        Pool pool = TestPostgres.journalPool(vertx);
        try {
            MutableClock clock = new MutableClock(Instant.parse("2026-12-05T10:00:00Z"));
            int waiters = 7;
            for (int i = 0; i < waiters; i++) {
                waitFor(pool, clock, "acme", "o-1");
            }
            waitFor(pool, clock, "acme", "o-2");
            waitFor(pool, clock, "globex", "o-1");
            await(pool.preparedQuery(
                            "INSERT INTO event_fields (tenant, name, field, filed_at) VALUES "
                                    + "('acme', 'order.paid', 'data.orderId', $1), ('globex', 'order.paid', 'data.orderId', $1)")
                    .execute(Tuple.of(clock.instant().atOffset(ZoneOffset.UTC))));

            JournalSteps steps = new JournalSteps(pool, clock, TasklineConfig.Durable.DEFAULTS, 3);
            JournalSteps.Received received =
                    await(steps.receive("acme", "e-1", "order.paid", "{\"orderId\": \"o-1\"}", true));
            assertTrue(received.fresh());
            assertEquals(waiters, received.delivered(), "three rounds of three, the last reaching one");
            assertEquals(waiters, received.woke().size());
            assertEquals(waiters, count(pool, "SELECT count(*) FROM task_signals WHERE kind = 'event'"));
            assertEquals(2, count(pool, "SELECT count(*) FROM tasks WHERE wait IS NOT NULL"), "o-2's and globex's");
            assertTrue(
                    await(steps.eventAnswer("acme", "e-1")).getInteger("delivered") == waiters,
                    "the answer counts every round");

            JournalSteps.Received again =
                    await(steps.receive("acme", "e-1", "order.paid", "{\"orderId\": \"o-1\"}", true));
            assertFalse(again.fresh());
            assertEquals(0, again.delivered());
        } finally {
            await(pool.close());
            await(vertx.close());
        }
    }

    private static void waitFor(Pool pool, MutableClock clock, String tenant, String orderId) throws Exception {
        await(pool.preparedQuery(
                        "INSERT INTO tasks (id, queue, type, state, payload, run_at, created_at, updated_at,"
                                + " tenant, wait) VALUES ($1, 'default', 'waits', 'pending', '{}', $2, $2, $2, $3, $4::text::jsonb)")
                .execute(Tuple.of(
                        UUID.randomUUID(),
                        clock.instant().plusSeconds(3600).atOffset(ZoneOffset.UTC),
                        tenant,
                        "{\"kind\": \"event\", \"name\": \"order.paid\", \"field\": \"data.orderId\", \"value\": \""
                                + orderId + "\"}")));
    }

    private static long count(Pool pool, String sql) throws Exception {
        return await(pool.query(sql).execute()).iterator().next().getLong(0);
    }
}
