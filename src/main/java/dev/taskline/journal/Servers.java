package dev.taskline.journal;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.PgConnection;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.PoolOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlConnectOptions;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Function;
import java.util.function.Supplier;
import java.util.logging.Logger;

/**
 * Which of the journal URL's servers a new connection goes to: the first, in the URL's order but
 * the last one taken first, whose session is what the URL asks for ({@code
 * target_session_attrs=read-write}: the primary). A pool asks once per connection it makes, so a
 * failover is followed as the dead primary's connections are replaced; the listening connection
 * asks each time it connects again.
 *
 * <p>Each answer is checked on a short connection of its own ({@code pg_is_in_recovery()}, {@code
 * transaction_read_only}), one check at a time however many connections wait for it; a URL of one
 * host is checked once, for the other thing the check learns: whether a connection pooler answers
 * for the server ({@link Server#pooled}). While no
 * server will do, asking fails at once for a growing pause (100 ms to 2 s) rather than trying every
 * host for each waiting request; the failure is a {@link ConnectException}, which the journal's
 * callers see as "the journal is not there" (503).
 */
public final class Servers {

    private static final Logger LOG = Logger.getLogger(Servers.class.getName());
    static final long FIRST_PAUSE_MS = 100;
    static final long MOST_PAUSE_MS = 2_000;

    private final Vertx vertx;
    private final PgTarget target;
    private final NetClientOptions net;
    private Server last;
    private Future<Server> checking;
    private long pauseMs = FIRST_PAUSE_MS;
    private long refusedUntil;
    private Throwable refusal;

    public Servers(Vertx vertx, PgTarget target) {
        this.vertx = vertx;
        this.target = target;
        this.net = new NetClientOptions().setConnectTimeout(target.connectTimeoutMs());
    }

    /** The connect timeout the URL asks for, for the clients that connect where this answers. */
    public NetClientOptions net() {
        return new NetClientOptions(net);
    }

    /** The servers, as the URL names them. */
    public PgTarget target() {
        return target;
    }

    /**
     * Where the next connection of a pool with its own {@code settings} goes: the choice is this
     * one's, shared by every pool and the listening connection, so that what one learned of a
     * failover the others know at once.
     */
    public Supplier<Future<SqlConnectOptions>> as(Function<Server, PgConnectOptions> settings) {
        return () -> locate().map(settings::apply);
    }

    /** Where the next connection goes. */
    public synchronized Future<Server> locate() {
        Server known = last;
        if (known != null && !target.mustChoose()) {
            return Future.succeededFuture(known);
        }
        if (checking != null) {
            return checking;
        }
        if (System.nanoTime() < refusedUntil) {
            return Future.failedFuture(refusal);
        }
        Future<Server> found = choose();
        checking = found;
        found.onComplete(done -> settle(done.succeeded() ? done.result() : null, done.cause()));
        return found;
    }

    private synchronized void settle(Server chosen, Throwable failure) {
        checking = null;
        if (chosen != null) {
            if (last != null && last.options() != chosen.options()) {
                LOG.warning("the journal moved: " + where(last.options()) + " -> " + where(chosen.options()));
            }
            if (chosen.pooled() && (last == null || !last.pooled())) {
                LOG.warning("the journal at " + where(chosen.options()) + " is reached through a connection"
                        + " pooler: each statement is sent unnamed and parsed again, and no session setting is"
                        + " sent, so statement_timeout and lock_timeout are the role's own (ALTER ROLE ... SET)");
            }
            last = chosen;
            pauseMs = FIRST_PAUSE_MS;
            refusal = null;
        } else {
            refusal = failure;
            refusedUntil = System.nanoTime() + pauseMs * 1_000_000;
            pauseMs = Math.min(MOST_PAUSE_MS, pauseMs * 2);
        }
    }

    private Future<Server> choose() {
        List<PgConnectOptions> order = new ArrayList<>(target.servers());
        Server known = last;
        if (known != null && order.remove(known.options())) {
            order.add(0, known.options());
        }
        List<Throwable> why = new ArrayList<>();
        Future<Server> chosen = first(order, 0, true, why);
        if (target.session() == PgTarget.Session.PREFER_STANDBY) {
            chosen = chosen.recover(e -> first(order, 0, false, why));
        }
        return chosen.recover(e -> {
            if (order.size() == 1 && why.size() == 1) {
                // One server that did not answer: its own reason (refused, TLS, a password) says most.
                return Future.failedFuture(why.get(0));
            }
            ConnectException none = new ConnectException("none of the journal's servers ("
                    + String.join(
                            ", ", target.servers().stream().map(Servers::where).toList()) + ") "
                    + (target.session() == PgTarget.Session.ANY
                            ? "answers"
                            : "is " + target.session().name().toLowerCase().replace('_', '-') + " now"));
            why.forEach(none::addSuppressed);
            return Future.failedFuture(none);
        });
    }

    private Future<Server> first(List<PgConnectOptions> order, int i, boolean preferring, List<Throwable> why) {
        if (i == order.size()) {
            return Future.failedFuture("none");
        }
        return check(order.get(i), preferring).transform(done -> {
            if (done.succeeded() && done.result() != null) {
                return Future.succeededFuture(done.result());
            }
            if (done.failed()) {
                why.add(done.cause());
            }
            return first(order, i + 1, preferring, why);
        });
    }

    /**
     * {@code server}, when it answers and its session is what the URL asks for; else null. A server
     * tells its backend's process id when a connection starts; a pooler makes one up, as the
     * connection it hands out is not one backend's: where the id the session reports differs, a
     * pooler stands between.
     */
    private Future<Server> check(PgConnectOptions server, boolean preferring) {
        Pool probe = PgBuilder.pool()
                .with(new PoolOptions().setMaxSize(1))
                .with(net())
                .connectingTo(new PgConnectOptions(server).setCachePreparedStatements(false))
                .using(vertx)
                .build();
        return probe.withConnection(connection -> connection
                        .query("SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on',"
                                + " pg_backend_pid()")
                        .execute()
                        .map(rows -> {
                            Row row = rows.iterator().next();
                            boolean pooled = PgConnection.cast(connection).processId() != row.getInteger(2);
                            return target.session().takes(row.getBoolean(0), row.getBoolean(1), preferring)
                                    ? new Server(server, pooled)
                                    : null;
                        }))
                .eventually(probe::close);
    }

    /**
     * A server a connection goes to, as the URL names it, and whether a connection pooler answers
     * for it (PgBouncer, a managed proxy): the session a connection seems to hold is then lent to
     * others between transactions, so nothing may be kept in it (prepared statements, settings,
     * LISTEN).
     */
    public record Server(PgConnectOptions options, boolean pooled) {}

    private static String where(PgConnectOptions server) {
        return server.getHost() + ":" + server.getPort();
    }
}
