package dev.taskline.recovery;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs {@link Recovery#runOnce} on a timer and when a queue asks for more, one pass at a time.
 * Lapsed leases are looked for on every tick; the journal's backlog is counted on every
 * {@value #CHECK_EVERY_TICKS}th tick and when a queue asks for more, at most once per
 * {@value #ROOM_GAP_MS} ms: that count reads every waiting task of the queue, and a node with a
 * long queue of its own would otherwise ask for it at every poll below half capacity (measured:
 * a fifth of PostgreSQL's time in the throughput benchmark).
 */
public final class RecoveryVerticle extends VerticleBase {

    private static final Logger LOG = Logger.getLogger(RecoveryVerticle.class.getName());

    private final Recovery recovery;
    private final long intervalMs;
    static final int CHECK_EVERY_TICKS = 5;
    static final long ROOM_GAP_MS = 1_000;

    private long timer = -1;
    private boolean passRunning;
    private boolean again;
    private long ticks;
    private boolean roomAsked;
    private long lastRoomPassNanos = System.nanoTime() - ROOM_GAP_MS * 1_000_000;
    private long roomTimer = -1;
    /** Set while deployed: a queue's signal that comes before or after is ignored. */
    private volatile boolean listening;

    public RecoveryVerticle(Recovery recovery, long intervalMs) {
        this.recovery = recovery;
        this.intervalMs = intervalMs;
    }

    @Override
    public Future<?> start() {
        listening = true;
        // The first pass reloads what an earlier run left; the node takes no new work before it ends.
        passRunning = true;
        return recovery.runOnce()
                .onSuccess(pass -> LOG.info("reloaded " + pass.pagedIn() + " waiting tasks, released " + pass.released()
                        + " lapsed leases"))
                .eventually(() -> {
                    passRunning = false;
                    timer = vertx.setPeriodic(intervalMs, id -> tick());
                    if (again) {
                        again = false;
                        tick();
                    }
                    return Future.succeededFuture();
                });
    }

    @Override
    public Future<?> stop() {
        vertx.cancelTimer(timer);
        if (roomTimer >= 0) {
            vertx.cancelTimer(roomTimer);
        }
        listening = false;
        return Future.succeededFuture();
    }

    /**
     * A queue fell to half while the journal holds more for it (the queue's room signal), on
     * whatever thread: a pass pages in, on this verticle's event loop, as soon as the gap allows.
     */
    public void room() {
        if (listening) {
            context.runOnContext(v -> roomAsked());
        }
    }

    private void roomAsked() {
        roomAsked = true;
        long waitMs = ROOM_GAP_MS - (System.nanoTime() - lastRoomPassNanos) / 1_000_000;
        if (waitMs <= 0) {
            tick();
        } else if (roomTimer < 0) {
            roomTimer = vertx.setTimer(waitMs, id -> {
                roomTimer = -1;
                tick();
            });
        }
    }

    private void tick() {
        if (passRunning) {
            again = true;
            return;
        }
        passRunning = true;
        boolean checkJournal = roomAsked || ticks++ % CHECK_EVERY_TICKS == 0;
        if (roomAsked) {
            lastRoomPassNanos = System.nanoTime();
        }
        roomAsked = false;
        recovery.runOnce(checkJournal)
                .onFailure(e -> LOG.log(Level.WARNING, "recovery pass failed; will try again", e))
                .onComplete(done -> {
                    passRunning = false;
                    if (again) {
                        // A call for room came during the pass; it may have seen a fuller queue than now.
                        again = false;
                        tick();
                    }
                });
    }
}
