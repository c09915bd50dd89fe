package dev.taskline.support;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import java.util.function.BooleanSupplier;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Runs a background pass on a timer, one pass at a time (a pass still running when the timer fires
 * again is not doubled). A failing pass is logged once, when it starts failing, not at every tick;
 * the pass itself decides what to keep meanwhile. Tests call the pass directly, not this.
 */
public final class Periodic extends VerticleBase {

    private static final Logger LOG = Logger.getLogger(Periodic.class.getName());

    private final String what;
    private final long intervalMs;
    private final Supplier<Future<?>> pass;
    private final BooleanSupplier told;
    private final long toldMs;
    private long lastNanos = System.nanoTime();
    private long timer = -1;
    private boolean running;
    private boolean failing;

    /** @param what the pass, as the warning names it ("reading the queue switches") */
    public Periodic(String what, long intervalMs, Supplier<Future<?>> pass) {
        this(what, intervalMs, pass, () -> false, intervalMs);
    }

    /**
     * A pass that notifications make urgent: while {@code told} holds (the node hears them), the timer
     * only backs them up, every {@code toldMs}; else it runs every {@code intervalMs}.
     */
    public Periodic(String what, long intervalMs, Supplier<Future<?>> pass, BooleanSupplier told, long toldMs) {
        this.what = what;
        this.intervalMs = intervalMs;
        this.pass = pass;
        this.told = told;
        this.toldMs = Math.max(intervalMs, toldMs);
    }

    @Override
    public Future<?> start() {
        timer = vertx.setPeriodic(intervalMs, id -> {
            if (running || (told.getAsBoolean() && (System.nanoTime() - lastNanos) / 1_000_000 < toldMs)) {
                return;
            }
            running = true;
            lastNanos = System.nanoTime();
            pass.get().onComplete(done -> {
                running = false;
                if (done.failed() && !failing) {
                    LOG.log(
                            Level.WARNING,
                            what + " failed; trying again every " + intervalMs + " ms: "
                                    + done.cause().getMessage());
                }
                failing = done.failed();
            });
        });
        return Future.succeededFuture();
    }

    @Override
    public Future<?> stop() {
        vertx.cancelTimer(timer);
        return Future.succeededFuture();
    }
}
