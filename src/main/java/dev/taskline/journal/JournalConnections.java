package dev.taskline.journal;

import dev.taskline.config.TasklineConfig;
import io.vertx.core.Vertx;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgException;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import java.util.function.Function;

/** How the node connects to its journal: one place, so that tests see the planner the node sees. */
public final class JournalConnections {

    private JournalConnections() {}

    /**
     * Every other statement. A generic plan is made once from the statistics of the moment (an empty
     * table on a new journal) and kept: measured, claims went from 20 to 150 ms. Custom plans see
     * the actual array lengths and table size.
     */
    public static PgConnectOptions options(String url) {
        return forStatements(new Servers.Server(PgUrl.parse(url), false), StatementTimeouts.NONE);
    }

    /**
     * The connection that journals new tasks (except those under an idempotency key, which share a
     * transaction with the key's row). {@code insert_tasks} reads no table (it inserts rows
     * made from its arrays), so there is no plan to misjudge and nothing for a custom plan to see; its
     * planning, though, was 0.4 of the 1.1 ms an idle submission spent in PostgreSQL (EXPLAIN
     * ANALYZE: 0.07 ms as a generic plan).
     */
    public static PgConnectOptions insertOptions(String url) {
        return forInserts(new Servers.Server(PgUrl.parse(url), false), StatementTimeouts.NONE);
    }

    /**
     * The servers {@code url} names, and the choice among them that the node's pools share. The
     * listening connection takes them as they are: one session, held open, that runs LISTEN and
     * nothing else. It must reach PostgreSQL itself: a pooler lends the session to others between
     * transactions (in transaction mode), and one found there, in whatever mode, makes the listening
     * connection poll instead ({@link Servers.Server#pooled}).
     */
    public static Servers servers(Vertx vertx, String url) {
        return new Servers(vertx, PgUrl.target(url));
    }

    /** The pool of every statement but the plain inserts ({@link #options}), of at most {@code size}. */
    public static Pool pool(Vertx vertx, Servers servers, int size, StatementTimeouts timeouts) {
        return pool(vertx, servers, server -> forStatements(server, timeouts), size);
    }

    /** The connections of the plain inserts ({@link #insertOptions}): one for each insert in flight. */
    public static Pool insertPool(Vertx vertx, Servers servers, int size, StatementTimeouts timeouts) {
        return pool(vertx, servers, server -> forInserts(server, timeouts), size);
    }

    /**
     * A pool of at most {@code size} connections, each with {@code settings}, to the server {@code
     * servers} chooses as each connection is made: a pool follows a failover as it replaces the
     * connections it lost, and learns from the first check whether a pooler stands between.
     */
    private static Pool pool(
            Vertx vertx, Servers servers, Function<Servers.Server, PgConnectOptions> settings, int size) {
        return PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(size))
                .with(servers.net())
                .connectingTo(servers.as(settings))
                .using(vertx)
                .build();
    }

    /**
     * A start-up failure as an operator should read it: PostgreSQL out of connections for this node
     * (SQLSTATE 53300: max_connections, or a role's or database's CONNECTION LIMIT) names the
     * node's own budget and what to change; any other failure is left as it is.
     */
    public static Throwable explainStart(Throwable failure, TasklineConfig.Journal journal) {
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof PgException pg && "53300".equals(pg.getSqlState())) {
                return new IllegalStateException(
                        "PostgreSQL refused this node a connection (" + pg.getErrorMessage() + "). A node holds up"
                                + " to journal.poolSize + journal.statementsInFlight + 1 = " + journal.connections()
                                + " connections (its pool, the connections of its inserts, its listening"
                                + " connection): raise max_connections (or the role's or database's CONNECTION"
                                + " LIMIT), lower journal.poolSize or journal.statementsInFlight, or"
                                + " reach PostgreSQL through a pooler (see the operations guide, 'Connection"
                                + " budget')",
                        failure);
            }
        }
        return failure;
    }

    private static PgConnectOptions forStatements(Servers.Server server, StatementTimeouts timeouts) {
        return server.pooled()
                ? throughPooler(server)
                : direct(server, timeouts).addProperty("plan_cache_mode", "force_custom_plan");
    }

    private static PgConnectOptions forInserts(Servers.Server server, StatementTimeouts timeouts) {
        return server.pooled()
                ? throughPooler(server)
                : direct(server, timeouts).addProperty("plan_cache_mode", "force_generic_plan");
    }

    /**
     * Through a pooler in transaction mode each statement may land on another backend: a statement
     * prepared by name on one is unknown to the next (PgBouncer 1.18 does not carry them), and
     * settings sent when the connection starts are refused (PgBouncer: "unsupported startup
     * parameter") or lost. So each statement is sent unnamed, parsed again in the same message as
     * its execution; the planner then makes a custom plan each time, as force_custom_plan asks of a
     * direct connection, at the cost of parsing and planning every statement. The statement and
     * lock timeouts cannot be sent either: they are the role's to set ({@code ALTER ROLE ... SET
     * statement_timeout}), as the operations guide says.
     */
    private static PgConnectOptions throughPooler(Servers.Server server) {
        return new PgConnectOptions(server.options())
                .setPipeliningLimit(256)
                .setCachePreparedStatements(false)
                .setUseLayer7Proxy(true);
    }

    private static PgConnectOptions direct(Servers.Server server, StatementTimeouts timeouts) {
        return new PgConnectOptions(server.options())
                .addProperty("statement_timeout", Long.toString(timeouts.statementMs()))
                .addProperty("lock_timeout", Long.toString(timeouts.lockMs()))
                .setPipeliningLimit(256)
                // Parsing the grouped array statements each time cost milliseconds (their CTEs are not
                // small), so they are prepared once per connection. All of them: the client's default
                // caches only texts shorter than 2,048 characters, and when finish grew past that it was
                // parsed and planned anew at every execution (0.9 ms of an idle task's 1.2 ms in its
                // finish) without anything saying so. The node sends only sql/'s named queries, a fixed set
                // well within the cache's size.
                .setCachePreparedStatements(true)
                .setPreparedStatementCacheMaxSize(128)
                .setPreparedStatementCacheSqlFilter(sql -> true)
                // The journal's working set lives in shared buffers; a random page read costs about what a
                // sequential one does. The default (4) priced a few hundred primary-key lookups above a
                // hash join over a whole table of tens of thousands of tasks.
                .addProperty("random_page_cost", "1.1");
    }
}
