package dev.taskline.queue;

import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import java.time.Clock;

/**
 * Moves scheduled tasks (delayed, or waiting out a retry's backoff) to waiting when they are due.
 * A timer is set for the earliest due time, so nothing polls; {@link #runOnce} is the whole pass,
 * which tests call after moving their clock. A slow safety tick catches tasks that were due while
 * their queue had no room.
 */
public final class Promoter extends VerticleBase {

    private static final long SAFETY_TICK_MS = 1_000;

    private final QueueRegistry queues;
    private final Clock clock;
    private long timer = -1;
    private long safety = -1;
    private long armedFor = Long.MAX_VALUE;
    /** Set while deployed: a queue's signal that comes before or after is ignored. */
    private volatile boolean listening;

    public Promoter(QueueRegistry queues, Clock clock) {
        this.queues = queues;
        this.clock = clock;
    }

    @Override
    public Future<?> start() {
        listening = true;
        safety = vertx.setPeriodic(SAFETY_TICK_MS, id -> promote());
        promote();
        return Future.succeededFuture();
    }

    @Override
    public Future<?> stop() {
        listening = false;
        vertx.cancelTimer(safety);
        vertx.cancelTimer(timer);
        return Future.succeededFuture();
    }

    /**
     * A queue scheduled a task ({@link QueueSignals#scheduled}), on whatever thread: the timer is set
     * sooner, on the promoter's own event loop, if that task is due first.
     */
    public void scheduled() {
        if (listening) {
            context.runOnContext(v -> arm());
        }
    }

    /**
     * Promotes every due task that fits, on the promoter's own event loop; the future holds how
     * many moved (the timer may have moved some a moment before: tests look at the tasks).
     */
    public Future<Integer> runOnce() {
        Promise<Integer> moved = Promise.promise();
        context.runOnContext(v -> moved.complete(promote()));
        return moved.future();
    }

    private int promote() {
        long now = clock.millis();
        int moved = 0;
        for (TaskQueue queue : queues.all()) {
            moved += queue.promoteDue(now);
        }
        armedFor = Long.MAX_VALUE;
        arm();
        return moved;
    }

    private void arm() {
        long next = Long.MAX_VALUE;
        for (TaskQueue queue : queues.all()) {
            next = Math.min(next, queue.nextDueMillis());
        }
        if (next == Long.MAX_VALUE || next >= armedFor) {
            return;
        }
        if (timer != -1) {
            vertx.cancelTimer(timer);
        }
        armedFor = next;
        long delay = Math.max(1, next - clock.millis());
        timer = vertx.setTimer(delay, id -> {
            timer = -1;
            promote();
        });
    }
}
