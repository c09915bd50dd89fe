package dev.taskline.journal;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.net.NetClientOptions;
import io.vertx.pgclient.PgBuilder;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.SqlClient;
import io.vertx.sqlclient.SqlConnectOptions;
import java.net.ConnectException;
import java.util.ArrayList;
import java.util.List;
import java.util.function.Supplier;
import java.util.function.UnaryOperator;
import java.util.logging.Logger;

/**
 * Which of the journal URL's servers a new connection goes to: the first, in the URL's order but
 * the last one taken first, whose session is what the URL asks for ({@code
 * target_session_attrs=read-write}: the primary). A pool asks once per connection it makes, so a
 * failover is followed as the dead primary's connections are replaced; the listening connection
 * asks each time it connects again.
 *
 * <p>Each answer is checked on a short connection of its own ({@code pg_is_in_recovery()}, {@code
 * transaction_read_only}), one check at a time however many connections wait for it. While no
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
    private PgConnectOptions last;
    private Future<PgConnectOptions> checking;
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
    public Supplier<Future<SqlConnectOptions>> as(UnaryOperator<PgConnectOptions> settings) {
        PgTarget same = target.with(settings);
        return () -> locate().map(chosen -> same.servers().get(target.servers().indexOf(chosen)));
    }

    /** Where the next connection goes. */
    public synchronized Future<PgConnectOptions> locate() {
        if (!target.mustChoose()) {
            return Future.succeededFuture(target.servers().get(0));
        }
        if (checking != null) {
            return checking;
        }
        if (System.nanoTime() < refusedUntil) {
            return Future.failedFuture(refusal);
        }
        Future<PgConnectOptions> found = choose();
        checking = found;
        found.onComplete(done -> settle(done.succeeded() ? done.result() : null, done.cause()));
        return found;
    }

    private synchronized void settle(PgConnectOptions chosen, Throwable failure) {
        checking = null;
        if (chosen != null) {
            if (last != null && (!last.getHost().equals(chosen.getHost()) || last.getPort() != chosen.getPort())) {
                LOG.warning("the journal moved: " + where(last) + " -> " + where(chosen));
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

    private Future<PgConnectOptions> choose() {
        List<PgConnectOptions> order = new ArrayList<>(target.servers());
        PgConnectOptions known = last;
        if (known != null && order.remove(known)) {
            order.add(0, known);
        }
        List<Throwable> why = new ArrayList<>();
        Future<PgConnectOptions> chosen = first(order, 0, true, why);
        if (target.session() == PgTarget.Session.PREFER_STANDBY) {
            chosen = chosen.recover(e -> first(order, 0, false, why));
        }
        return chosen.recover(e -> {
            ConnectException none = new ConnectException("none of the journal's servers ("
                    + String.join(
                            ", ", target.servers().stream().map(Servers::where).toList()) + ") is "
                    + target.session().name().toLowerCase().replace('_', '-') + " now");
            why.forEach(none::addSuppressed);
            return Future.failedFuture(none);
        });
    }

    private Future<PgConnectOptions> first(
            List<PgConnectOptions> order, int i, boolean preferring, List<Throwable> why) {
        if (i == order.size()) {
            return Future.failedFuture("none");
        }
        PgConnectOptions server = order.get(i);
        return check(server, preferring).transform(done -> {
            if (done.succeeded() && done.result()) {
                return Future.succeededFuture(server);
            }
            if (done.failed()) {
                why.add(done.cause());
            }
            return first(order, i + 1, preferring, why);
        });
    }

    /** Whether {@code server} answers and its session is what the URL asks for. */
    private Future<Boolean> check(PgConnectOptions server, boolean preferring) {
        SqlClient probe = PgBuilder.client()
                .with(net())
                .connectingTo(new PgConnectOptions(server).setCachePreparedStatements(false))
                .using(vertx)
                .build();
        return probe.query("SELECT pg_is_in_recovery(), current_setting('transaction_read_only') = 'on'")
                .execute()
                .map(rows -> {
                    Row row = rows.iterator().next();
                    return target.session().takes(row.getBoolean(0), row.getBoolean(1), preferring);
                })
                .eventually(probe::close);
    }

    private static String where(PgConnectOptions server) {
        return server.getHost() + ":" + server.getPort();
    }
}
