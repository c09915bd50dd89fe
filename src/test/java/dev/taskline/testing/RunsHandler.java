package dev.taskline.testing;

import dev.taskline.handler.TaskContext;
import dev.taskline.handler.TaskHandler;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.util.Map;
import java.util.UUID;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code runs}: waits {@code ms} on a timer, and counts its runs per task from inside the handler,
 * whichever in-process node runs it: what "ran exactly once" means, which a task's attempt number
 * and its journaled ends alone cannot show (an attempt handed back is not counted, and a fenced
 * run journals no end).
 */
public final class RunsHandler implements TaskHandler {

    private static final Map<UUID, AtomicInteger> RUNS = new ConcurrentHashMap<>();

    /** How many times task {@code id} started since the last {@link #reset}. */
    public static int runs(UUID id) {
        AtomicInteger n = RUNS.get(id);
        return n == null ? 0 : n.get();
    }

    public static void reset() {
        RUNS.clear();
    }

    @Override
    public String type() {
        return "runs";
    }

    @Override
    public Future<JsonObject> run(TaskContext context) {
        RUNS.computeIfAbsent(context.taskId(), id -> new AtomicInteger()).incrementAndGet();
        Promise<JsonObject> done = Promise.promise();
        context.vertx()
                .setTimer(Math.max(1, context.payload().getLong("ms", 1L)), id -> done.complete(new JsonObject()));
        return done.future();
    }
}
