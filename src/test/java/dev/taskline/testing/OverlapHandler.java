package dev.taskline.testing;

import dev.taskline.handler.TaskContext;
import dev.taskline.handler.TaskHandler;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code overlap}: waits {@code ms} on a timer and counts how many of its kind run at once, from
 * inside the handler: what a slot limit is about, which the journal alone cannot show once ends are
 * journaled behind a freed slot.
 */
public final class OverlapHandler implements TaskHandler {

    private static final AtomicInteger RUNNING = new AtomicInteger();
    private static final AtomicInteger MOST = new AtomicInteger();

    /** The most that ran at once since the last {@link #reset}. */
    public static int most() {
        return MOST.get();
    }

    public static void reset() {
        MOST.set(0);
    }

    @Override
    public String type() {
        return "overlap";
    }

    @Override
    public Future<JsonObject> run(TaskContext context) {
        MOST.accumulateAndGet(RUNNING.incrementAndGet(), Math::max);
        Promise<JsonObject> done = Promise.promise();
        context.vertx().setTimer(Math.max(1, context.payload().getLong("ms", 1L)), id -> {
            RUNNING.decrementAndGet();
            done.complete(new JsonObject());
        });
        return done.future();
    }
}
