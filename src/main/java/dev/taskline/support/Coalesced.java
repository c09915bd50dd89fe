package dev.taskline.support;

import io.vertx.core.Future;
import java.util.concurrent.atomic.AtomicInteger;
import java.util.function.Consumer;
import java.util.function.Supplier;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * A pass that is asked for in bursts (by notifications, by wake-ups): one runs at a time, and the
 * asks that come while it runs make one more after it, not one each. A burst of a thousand asks
 * costs two passes. Safe from any thread; the payload of an ask is not looked at.
 */
public final class Coalesced implements Consumer<String> {

    private static final Logger LOG = Logger.getLogger(Coalesced.class.getName());

    private final String what;
    private final Supplier<Future<?>> pass;
    /** 0 idle, 1 a pass runs, 2 it runs and another is asked for. */
    private final AtomicInteger state = new AtomicInteger();

    /** @param what the pass, as the log names it ("paging in on a wake-up") */
    public Coalesced(String what, Supplier<Future<?>> pass) {
        this.what = what;
        this.pass = pass;
    }

    @Override
    public void accept(String payload) {
        if (state.getAndUpdate(s -> Math.min(2, s + 1)) == 0) {
            run();
        }
    }

    private void run() {
        Future<?> running;
        try {
            running = pass.get();
        } catch (RuntimeException e) {
            running = Future.failedFuture(e);
        }
        running.onComplete(done -> {
            if (done.failed()) {
                LOG.log(Level.FINE, what + " failed; the timed pass will do it", done.cause());
            }
            if (state.decrementAndGet() > 0) {
                run();
            }
        });
    }
}
