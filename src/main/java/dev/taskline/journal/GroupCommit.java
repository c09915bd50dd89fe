package dev.taskline.journal;

import dev.taskline.model.problem.JournalBusyException;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.function.Function;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Groups concurrent requests of one kind into one statement. A flush starts as soon as the
 * previous one returns and takes everything that queued meanwhile (up to {@code maxGroup}), so
 * under light load a request waits for no timer, and under heavy load each round trip carries a
 * large group. Durability is unchanged: every caller's future completes only after its group's
 * statement has committed.
 *
 * <p>Callers may sit on different event loops; each one's future completes on its own context,
 * so the caller's state is never touched from a foreign thread.
 *
 * @param <R> a request
 * @param <T> its answer
 */
final class GroupCommit<R, T> {

    private static final Logger LOG = Logger.getLogger(GroupCommit.class.getName());

    private final int maxGroup;
    private final int maxWaiting;
    private final Function<List<R>, Future<List<T>>> flush;
    private final ArrayDeque<Waiting<R, T>> queue = new ArrayDeque<>();
    private boolean flushing;

    /** @param flush runs one statement for a group; its answers are in the order of the requests */
    GroupCommit(int maxGroup, Function<List<R>, Future<List<T>>> flush) {
        this(maxGroup, Integer.MAX_VALUE, flush);
    }

    /**
     * @param maxWaiting requests that may wait for the flush in progress; beyond, a request fails at
     *                   once with {@link JournalBusyException} and never reaches the journal
     */
    GroupCommit(int maxGroup, int maxWaiting, Function<List<R>, Future<List<T>>> flush) {
        this.maxGroup = maxGroup;
        this.maxWaiting = maxWaiting;
        this.flush = flush;
    }

    Future<T> submit(R request) {
        Promise<T> promise = Promise.promise();
        boolean start;
        synchronized (this) {
            if (queue.size() >= maxWaiting) {
                return Future.failedFuture(new JournalBusyException(queue.size()));
            }
            queue.add(new Waiting<>(request, promise, Vertx.currentContext()));
            start = !flushing;
            flushing = true;
        }
        if (start) {
            flushNext();
        }
        return promise.future();
    }

    /** Requests waiting for the flush in progress to return. */
    synchronized int waiting() {
        return queue.size();
    }

    private void flushNext() {
        List<Waiting<R, T>> group = new ArrayList<>();
        synchronized (this) {
            while (group.size() < maxGroup && !queue.isEmpty()) {
                group.add(queue.poll());
            }
            if (group.isEmpty()) {
                flushing = false;
                return;
            }
        }
        List<R> requests = new ArrayList<>(group.size());
        for (Waiting<R, T> waiting : group) {
            requests.add(waiting.request);
        }
        Future<List<T>> result;
        try {
            result = flush.apply(requests);
        } catch (RuntimeException e) {
            result = Future.failedFuture(e);
        }
        result.onComplete(done -> {
            if (done.succeeded()) {
                deliverAll(group, done.result());
                flushNext();
            } else if (group.size() == 1) {
                group.get(0).deliver(null, done.cause());
                flushNext();
            } else {
                // One bad request must not fail the others that happened to share its statement: run
                // each alone, so that every caller gets the answer its own request deserves.
                isolate(group, 0).onComplete(v -> flushNext());
            }
        });
    }

    /**
     * Answers a group: on the flushing context directly, and with one hop to each other context for
     * all of its callers, not one per caller (a group of 500 from one worker is one task on its loop).
     */
    private static <R, T> void deliverAll(List<Waiting<R, T>> group, List<T> answers) {
        Context here = Vertx.currentContext();
        Map<Context, List<Integer>> elsewhere = null;
        for (int i = 0; i < group.size(); i++) {
            Waiting<R, T> waiting = group.get(i);
            if (waiting.context == null || waiting.context == here) {
                waiting.complete(answers.get(i), null);
            } else {
                if (elsewhere == null) {
                    // In the order of the group's first caller on each, as one hop per caller had it.
                    elsewhere = new LinkedHashMap<>();
                }
                elsewhere
                        .computeIfAbsent(waiting.context, c -> new ArrayList<>())
                        .add(i);
            }
        }
        if (elsewhere != null) {
            for (Map.Entry<Context, List<Integer>> entry : elsewhere.entrySet()) {
                List<Integer> indexes = entry.getValue();
                entry.getKey().runOnContext(v -> {
                    for (int i : indexes) {
                        group.get(i).complete(answers.get(i), null);
                    }
                });
            }
        }
    }

    private Future<Void> isolate(List<Waiting<R, T>> group, int index) {
        if (index == group.size()) {
            return Future.succeededFuture();
        }
        Waiting<R, T> waiting = group.get(index);
        Future<List<T>> alone;
        try {
            alone = flush.apply(List.of(waiting.request));
        } catch (RuntimeException e) {
            alone = Future.failedFuture(e);
        }
        return alone.transform(done -> {
            waiting.deliver(done.succeeded() ? done.result().get(0) : null, done.succeeded() ? null : done.cause());
            return isolate(group, index + 1);
        });
    }

    private record Waiting<R, T>(R request, Promise<T> promise, Context context) {
        void deliver(T value, Throwable failure) {
            if (context == null || context == Vertx.currentContext()) {
                complete(value, failure);
            } else {
                context.runOnContext(v -> complete(value, failure));
            }
        }

        /** Never throws: a caller's callback that does must not keep the others of its group from their answers. */
        private void complete(T value, Throwable failure) {
            try {
                if (failure == null) {
                    promise.complete(value);
                } else {
                    promise.fail(failure);
                }
            } catch (RuntimeException e) {
                LOG.log(Level.WARNING, "a caller's callback failed on its answer", e);
            }
        }
    }
}
