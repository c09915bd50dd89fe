package dev.taskline.testing;

import dev.taskline.handler.TaskContext;
import dev.taskline.handler.TaskHandler;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.UUID;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;

/**
 * {@code gate}: a task that runs until the test opens it. Each invocation is announced on
 * {@link #calls}, so a test waits for "the handler is running" as a signal instead of sleeping, and
 * decides when and how the attempt ends.
 */
public final class GateHandler implements TaskHandler {

    private static final BlockingQueue<Call> CALLS = new LinkedBlockingQueue<>();

    @Override
    public String type() {
        return "gate";
    }

    @Override
    public Future<JsonObject> run(TaskContext context) {
        Promise<JsonObject> promise = Promise.promise();
        CALLS.add(new Call(
                context.taskId(), context.attempt(), context, context.vertx().getOrCreateContext(), promise));
        return promise.future();
    }

    /** The next invocation, waiting at most {@code timeout}; fails the test if none comes. */
    public static Call next(Duration timeout) throws InterruptedException {
        Call call = CALLS.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (call == null) {
            throw new AssertionError("no gate task started within " + timeout);
        }
        return call;
    }

    public static void reset() {
        CALLS.clear();
    }

    /** One running attempt; complete it on its own event loop, as a real handler would. */
    public record Call(UUID taskId, int attempt, TaskContext task, Context context, Promise<JsonObject> promise) {
        public void succeed(JsonObject result) {
            context.runOnContext(v -> promise.tryComplete(result));
        }

        public void fail(String message) {
            context.runOnContext(v -> promise.tryFail(new IllegalStateException(message)));
        }

        public void progress(int percent, String message) {
            task.progress(percent, message);
        }

        public void fail(RuntimeException failure) {
            context.runOnContext(v -> promise.tryFail(failure));
        }

        /** Whether the worker has told this attempt to stop. */
        public boolean cancelled() {
            return task.cancelled();
        }
    }
}
