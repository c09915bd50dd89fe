package dev.taskline.worker;

import dev.taskline.model.problem.JournalUnavailableException;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.function.Supplier;

/**
 * A write tried again while the journal is not there (a failover, a pooler restarting), with a
 * growing pause, for as long as its lease could still be held: an attempt that ran to its end
 * during the outage keeps its result, where giving up would leave the task to run again once its
 * lease lapsed. Writes are fenced by the lease's version, so one that committed before its answer
 * was lost, or that comes after the task was handed on, changes nothing.
 */
final class UntilBack {

    static final long FIRST_PAUSE_MS = 100;
    static final long MOST_PAUSE_MS = 2_000;

    private UntilBack() {}

    /** {@code write}, again on {@link JournalUnavailableException} until it is {@code withinMs} old. */
    static <T> Future<T> write(Vertx vertx, Supplier<Future<T>> write, long withinMs) {
        long giveUpAt = System.nanoTime() + withinMs * 1_000_000;
        Promise<T> written = Promise.promise();
        attempt(vertx, write, giveUpAt, FIRST_PAUSE_MS, written);
        return written.future();
    }

    private static <T> void attempt(
            Vertx vertx, Supplier<Future<T>> write, long giveUpAt, long pauseMs, Promise<T> written) {
        write.get().onComplete(done -> {
            if (done.succeeded()) {
                written.complete(done.result());
            } else if (done.cause() instanceof JournalUnavailableException
                    && System.nanoTime() + pauseMs * 1_000_000 < giveUpAt) {
                vertx.setTimer(
                        pauseMs, t -> attempt(vertx, write, giveUpAt, Math.min(MOST_PAUSE_MS, pauseMs * 2), written));
            } else {
                written.fail(done.cause());
            }
        });
    }
}
