package dev.taskline.journal;

import static dev.taskline.testing.TestNode.await;
import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;
import static org.junit.jupiter.api.Assumptions.assumeFalse;

import dev.taskline.testing.TestNode;
import dev.taskline.testing.TestPostgres;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import io.vertx.pgclient.PgBuilder;
import io.vertx.sqlclient.Pool;
import org.junit.jupiter.api.Test;

/**
 * What a node takes of PostgreSQL's connections, and what it says when there are none left: the
 * registry and the metrics show each node's connections, within journal.poolSize +
 * journal.statementsInFlight + 1; a database
 * that has no connection left for it stops its start with the budget spelled out, at once.
 */
class ConnectionBudgetTest {

    private static final String CONFIG = """
      {"journal": {"poolSize": 3, "statementsInFlight": 2}, "queues": {"default": {"slots": 2}}}
      """;

    @Test
    void the_registry_and_the_metrics_show_each_nodes_connections_within_its_budget() throws Exception {
        String db = TestPostgres.newDatabase();
        try (TestNode a = TestNode.start(db, CONFIG);
                TestNode b = TestNode.start(db, CONFIG)) {
            await(a.node.passes().cluster().runOnce());
            await(b.node.passes().cluster().runOnce());
            int sum = 0;
            for (Object o : a.getJson("/api/nodes").getJsonArray("nodes")) {
                JsonObject node = (JsonObject) o;
                int connections = node.getInteger("connections");
                // At least the pool's first connection and the listening one; at most the budget.
                assertTrue(connections >= 2 && connections <= 3 + 2 + 1, node.encode());
                sum += connections;
            }
            double open = a.metric("taskline_journal_connections");
            assertTrue(open >= 2 && open <= 6, "open: " + open);
            assertEquals(6.0, a.metric("taskline_journal_connections_max"));
            // What PostgreSQL counts is at least what the nodes said (each heartbeat counts its own).
            assertTrue(sum >= 4, "sum " + sum);
        }
    }

    @Test
    void a_database_with_no_connection_left_stops_the_start_with_the_budget_spelled_out() throws Exception {
        String db = TestPostgres.newDatabase();
        assumeFalse(superuser(db), "a superuser is not held to a database's connection limit");
        TestPostgres.connectionLimit(db, 0);
        Exception refused =
                assertThrows(Exception.class, () -> TestNode.start(db, CONFIG).close());
        String message = String.valueOf(refused.getMessage());
        assertTrue(message.contains("journal.poolSize + journal.statementsInFlight + 1 = 6"), message);
        assertTrue(message.contains("too many connections"), message);
    }

    private static boolean superuser(String url) throws Exception {
        Vertx vertx = Vertx.vertx();
        try {
            Pool pool =
                    PgBuilder.pool().connectingTo(PgUrl.parse(url)).using(vertx).build();
            boolean is = await(pool.query("SELECT rolsuper FROM pg_roles WHERE rolname = current_user")
                            .execute())
                    .iterator()
                    .next()
                    .getBoolean(0);
            await(pool.close());
            return is;
        } finally {
            await(vertx.close());
        }
    }
}
