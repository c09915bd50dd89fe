package dev.taskline.journal;

import dev.taskline.model.problem.JournalBusyException;
import dev.taskline.model.problem.JournalUnavailableException;
import io.vertx.core.Future;
import io.vertx.core.VertxException;
import io.vertx.pgclient.PgException;
import java.io.IOException;

/**
 * Which failures of a journal call mean "the journal is not there right now" (its callers get
 * {@link JournalUnavailableException}, 503) and which stay what they were: a fault of the request
 * or of ours.
 */
final class JournalFailures {

    private JournalFailures() {}

    /**
     * As {@link #guard}, for a read on a read replica: a hot standby cancels a query that conflicts
     * with what it replays (SQLSTATE 40001, or 40P01), which says the replica cannot serve it now,
     * not that the request is wrong.
     */
    static <T> Future<T> guardReplica(Future<T> future) {
        return guard(future).recover(e -> {
            for (Throwable t = e; t != null; t = t.getCause()) {
                if (t instanceof PgException pg
                        && ("40001".equals(pg.getSqlState()) || "40P01".equals(pg.getSqlState()))) {
                    return Future.failedFuture(new JournalUnavailableException(e));
                }
            }
            return Future.failedFuture(e);
        });
    }

    /** The future, with a failure that means "the journal is not there" turned into this exception. */
    static <T> Future<T> guard(Future<T> future) {
        return future.recover(e -> Future.failedFuture(classify(e)));
    }

    /**
     * The failure as the caller should see it: {@link JournalUnavailableException} when anything in
     * its causes says the connection to the journal failed or is gone (refused, reset, closed, timed
     * out: any I/O failure of the client's socket), or the server says it is not there for us
     * (see {@link #unavailableClass}); else the failure itself. The one place that decides it, for
     * every call of the journal.
     */
    static Throwable classify(Throwable failure) {
        if (failure instanceof JournalUnavailableException || failure instanceof JournalBusyException) {
            return failure;
        }
        for (Throwable t = failure; t != null; t = t.getCause()) {
            // IOException: a connection refused, reset by the peer, closed under a request, a channel
            // gone; the journal client does no other I/O. (A reset surfaced as a 500 while PostgreSQL
            // stopped under load: nothing had committed, and the contract is 503.)
            if (t instanceof IOException
                    || t instanceof io.vertx.sqlclient.ClosedConnectionException
                    || t instanceof java.util.concurrent.TimeoutException) {
                return new JournalUnavailableException(failure);
            }
            if (t instanceof PgException pg && pg.getSqlState() != null && unavailableClass(pg.getSqlState())) {
                return new JournalUnavailableException(failure);
            }
            if (t instanceof VertxException && closedOrUnreachable(t.getMessage())) {
                return new JournalUnavailableException(failure);
            }
        }
        return failure;
    }

    /**
     * Why the journal refused a write for what it was asked to keep, or null when the failure is of
     * another kind. A refusal is for good: SQLSTATE classes 22 (a value it cannot hold: a NUL, a
     * timestamp past its range), 23 (a constraint), 54 (a limit, as a value too large), or a value
     * the client could not write. Not one: the journal not there or busy, a conflict (40) or
     * anything else that the same write could get past later.
     */
    static String refusal(Throwable failure) {
        Throwable classified = classify(failure);
        if (classified instanceof JournalUnavailableException || classified instanceof JournalBusyException) {
            return null;
        }
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof PgException pg && pg.getSqlState() != null) {
                return switch (pg.getSqlState().substring(0, 2)) {
                    case "22", "23", "54" ->
                        pg.getErrorMessage()
                                + (pg.getDetail() == null ? "" : " (" + pg.getDetail() + ")")
                                + " [" + pg.getSqlState() + "]";
                    default -> null;
                };
            }
            if (t instanceof io.vertx.core.json.EncodeException
                    || t instanceof java.time.DateTimeException
                    || t instanceof ArithmeticException) {
                return "the client could not write it: " + t.getMessage();
            }
        }
        return null;
    }

    /** What the client says, without a cause, of a connection or pool that is gone. */
    private static boolean closedOrUnreachable(String message) {
        String text = String.valueOf(message).toLowerCase(java.util.Locale.ROOT);
        return text.contains("connection") || text.contains("closed");
    }

    /**
     * SQLSTATE classes that mean "the journal is not there right now", not "this request is wrong":
     * connection exceptions (08), insufficient resources (53), operator intervention such as a
     * shutdown (57), a database that is gone (3D) or refuses our role (28).
     */
    private static boolean unavailableClass(String sqlState) {
        // A write on a server that is, or has become, a standby: the primary is elsewhere now. A lock
        // held by another session past lock_timeout: the journal cannot serve this now (a statement
        // past statement_timeout is 57014, of class 57).
        if (sqlState.equals("25006") || sqlState.equals("55P03")) {
            return true;
        }
        return switch (sqlState.substring(0, 2)) {
            case "08", "53", "57", "3D", "28" -> true;
            default -> false;
        };
    }
}
