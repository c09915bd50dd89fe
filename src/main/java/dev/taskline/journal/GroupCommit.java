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
 * Groups concurrent requests of one kind into one statement. A flush starts at once when none is
 * out, and takes everything that queued meanwhile (up to {@code maxGroup}), so under light load a
 * request waits for no timer, and under heavy load each round trip carries a large group. Up to
 * {@code maxInFlight} statements may be out at once, on as many connections: one statement runs on
 * one PostgreSQL backend, one core, so a node that waited for each before sending the next used a
 * core of the database per kind of write however many it had (and sat idle for each round trip
 * when the database is a millisecond away). As a statement lands, what waited goes out in its
 * place. Beside statements still out, another goes out only once as many wait as the last group
 * sent (and at least {@link #MIN_EXTRA_GROUP}): requests arriving faster than one statement at a
 * time carries them, which is when a second one pays. A load that one statement keeps up with
 * still makes few, full groups, each with one commit: on a database short of cores, cutting it
 * into more statements only spends them (measured on two cores: a drain 0.84x as fast when any 32
 * waiting requests went out beside the statement in flight). Durability is unchanged: every
 * caller's future completes only after its group's statement has committed. Statements in flight
 * together commit in any order: a kind whose requests must land in the order they were made (two
 * progress reports of one task) keeps one.
 *
 * <p>Callers may sit on different event loops; each one's future completes on its own context,
 * so the caller's state is never touched from a foreign thread.
 *
 * @param <R> a request
 * @param <T> its answer
 */
final class GroupCommit<R, T> {

    private static final Logger LOG = Logger.getLogger(GroupCommit.class.getName());

    /** The fewest requests that go out as a statement beside one already out. */
    static final int MIN_EXTRA_GROUP = 32;

    private final int maxGroup;
    private final int maxWaiting;
    private final int maxInFlight;
    private final Function<List<R>, Future<List<T>>> flush;
    private final ArrayDeque<Waiting<R, T>> queue = new ArrayDeque<>();
    private int inFlight;
    private int lastSent;

    /**
     * One statement at a time: for a kind whose requests must land in order.
     *
     * @param flush runs one statement for a group; its answers are in the order of the requests
     */
    GroupCommit(int maxGroup, Function<List<R>, Future<List<T>>> flush) {
        this(maxGroup, Integer.MAX_VALUE, 1, flush);
    }

    /**
     * @param maxWaiting  requests that may wait for a statement to go out; beyond, a request fails
     *                    at once with {@link JournalBusyException} and never reaches the journal
     * @param maxInFlight statements out at once; each needs a connection of its own to run beside
     *                    the others
     */
    GroupCommit(int maxGroup, int maxWaiting, int maxInFlight, Function<List<R>, Future<List<T>>> flush) {
        if (maxInFlight < 1) {
            throw new IllegalArgumentException("maxInFlight must be at least 1, got " + maxInFlight);
        }
        this.maxGroup = maxGroup;
        this.maxWaiting = maxWaiting;
        this.maxInFlight = maxInFlight;
        this.flush = flush;
    }

    Future<T> submit(R request) {
        Promise<T> promise = Promise.promise();
        synchronized (this) {
            if (queue.size() >= maxWaiting) {
                return Future.failedFuture(new JournalBusyException(queue.size()));
            }
            queue.add(new Waiting<>(request, promise, Vertx.currentContext()));
        }
        flushWhileDue(false);
        return promise.future();
    }

    /** Requests waiting for a statement to go out. */
    synchronized int waiting() {
        return queue.size();
    }

    /** Statements out now. */
    synchronized int inFlight() {
        return inFlight;
    }

    /**
     * Sends every statement that is due: what waits when none is out or one just landed, more while
     * a group's worth waits and room is left.
     *
     * @param landed whether a statement just landed and left its room
     */
    private void flushWhileDue(boolean landed) {
        List<Waiting<R, T>> group;
        boolean any = landed;
        while ((group = nextGroup(any)) != null) {
            send(group);
            any = false;
        }
    }

    private synchronized List<Waiting<R, T>> nextGroup(boolean any) {
        int worth = inFlight == 0 || any ? 1 : Math.max(MIN_EXTRA_GROUP, Math.min(lastSent, maxGroup));
        if (inFlight >= maxInFlight || queue.size() < worth) {
            return null;
        }
        List<Waiting<R, T>> group = new ArrayList<>(Math.min(queue.size(), maxGroup));
        while (group.size() < maxGroup && !queue.isEmpty()) {
            group.add(queue.poll());
        }
        inFlight++;
        lastSent = group.size();
        return group;
    }

    /** A statement landed (its callers answered): its room goes to what waits. */
    private void landed() {
        synchronized (this) {
            inFlight--;
        }
        flushWhileDue(true);
    }

    private void send(List<Waiting<R, T>> group) {
        List<R> requests = new ArrayList<>(group.size());
        for (Waiting<R, T> waiting : group) {
            requests.add(waiting.request);
        }
        flushMoving(requests, 0).onComplete(done -> {
            if (done.succeeded()) {
                deliverAll(group, done.result());
                landed();
            } else if (group.size() == 1) {
                group.get(0).deliver(null, done.cause());
                landed();
            } else {
                // One bad request must not fail the others that happened to share its statement: run
                // each alone, so that every caller gets the answer its own request deserves.
                isolate(group, 0).onComplete(v -> landed());
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
        return flushMoving(List.of(waiting.request), 0).transform(done -> {
            waiting.deliver(done.succeeded() ? done.result().get(0) : null, done.succeeded() ? null : done.cause());
            return isolate(group, index + 1);
        });
    }

    /**
     * Times a statement runs again when it lost a row to a concurrent move between partitions: a task
     * that ended (or was retried) moves to another table of the journal (migration 000030), and a
     * statement that meant to update or lock its old row in the meantime fails whole with SQLSTATE
     * 40001 instead of finding the row changed. Nothing of it committed; run again, it sees the row
     * where it is now and decides as it would have.
     */
    static final int MOVED_TRIES = 3;

    private Future<List<T>> flushMoving(List<R> requests, int tries) {
        Future<List<T>> result;
        try {
            result = flush.apply(requests);
        } catch (RuntimeException e) {
            result = Future.failedFuture(e);
        }
        return result.recover(
                e -> tries + 1 < MOVED_TRIES && moved(e) ? flushMoving(requests, tries + 1) : Future.failedFuture(e));
    }

    /** SQLSTATE 40001 on a primary under READ COMMITTED: a row moved to another partition meanwhile. */
    static boolean moved(Throwable e) {
        for (Throwable t = e; t != null; t = t.getCause()) {
            if (t instanceof io.vertx.pgclient.PgException pg && "40001".equals(pg.getSqlState())) {
                return true;
            }
        }
        return false;
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
