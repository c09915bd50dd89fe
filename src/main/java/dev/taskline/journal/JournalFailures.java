package dev.taskline.journal;

import dev.taskline.model.problem.JournalBusyException;
import dev.taskline.model.problem.JournalUnavailableException;
import io.vertx.core.Future;
import io.vertx.core.VertxException;
import io.vertx.pgclient.PgException;
import java.net.ConnectException;

/**
 * Which failures of a journal call mean "the journal is not there right now" (its callers get
 * {@link JournalUnavailableException}, 503) and which stay what they were: a fault of the request
 * or of ours.
 */
final class JournalFailures {

    private JournalFailures() {}

    /** The future, with a failure that means "the journal is not there" turned into this exception. */
    static <T> Future<T> guard(Future<T> future) {
        return future.recover(e -> Future.failedFuture(classify(e)));
    }

    static Throwable classify(Throwable failure) {
        if (failure instanceof JournalUnavailableException || failure instanceof JournalBusyException) {
            return failure;
        }
        for (Throwable t = failure; t != null; t = t.getCause()) {
            if (t instanceof ConnectException
                    || t instanceof io.vertx.sqlclient.ClosedConnectionException
                    || t instanceof java.util.concurrent.TimeoutException
                    || t instanceof io.netty.channel.ConnectTimeoutException) {
                return new JournalUnavailableException(failure);
            }
            if (t instanceof PgException pg && pg.getSqlState() != null && unavailableClass(pg.getSqlState())) {
                return new JournalUnavailableException(failure);
            }
            if (t instanceof VertxException && String.valueOf(t.getMessage()).contains("Connection")) {
                return new JournalUnavailableException(failure);
            }
        }
        return failure;
    }

    /**
     * SQLSTATE classes that mean "the journal is not there right now", not "this request is wrong":
     * connection exceptions (08), insufficient resources (53), operator intervention such as a
     * shutdown (57), a database that is gone (3D) or refuses our role (28).
     */
    private static boolean unavailableClass(String sqlState) {
        return switch (sqlState.substring(0, 2)) {
            case "08", "53", "57", "3D", "28" -> true;
            default -> false;
        };
    }
}
