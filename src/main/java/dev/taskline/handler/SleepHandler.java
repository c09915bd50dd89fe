package dev.taskline.handler;

import dev.taskline.support.IsoTime;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonObject;
import java.time.Clock;

/**
 * {@code sleep}: waits {@code ms} on a timer, reporting progress in {@code steps} even steps, and
 * fails its first {@code failTimes} attempts. Told to stop (a cancel, its timeout, the node's grace
 * ending), it stops at once, where it slept on to the end; a compensating run has nothing to undo. For tests, demos and load tests; {@code ms: 0} is a
 * no-op that measures the server itself. Its result says when its code began to run ({@code
 * startedAt}, wall clock, microseconds), which is what a client timing submit-to-start wants: the
 * task's own {@code startedAt} is the journal's claim, and for a task dispatched at admission that
 * is stamped before the insert commits, so before any handler can start.
 */
public final class SleepHandler implements TaskHandler {

    static final long MAX_MS = 3_600_000;
    static final int MAX_STEPS = 1_000;
    static final int MAX_FAIL_TIMES = 100;

    // The wall clock on purpose: the instant is compared with clients' clocks, not with the node's
    // injected business time.
    private final Clock wallClock = Clock.systemUTC();

    @Override
    public String type() {
        return "sleep";
    }

    @Override
    public void validate(JsonObject payload) throws InvalidPayloadException {
        settings(payload);
    }

    @Override
    public Future<JsonObject> run(TaskContext context) {
        String startedAt = IsoTime.micros(wallClock.instant());
        Settings settings;
        try {
            settings = settings(context.payload());
        } catch (InvalidPayloadException e) {
            return Future.failedFuture(new IllegalArgumentException(e.getMessage()));
        }
        if (context.attempt() <= settings.failTimes) {
            return Future.failedFuture(
                    new IllegalStateException("planned failure " + context.attempt() + " of " + settings.failTimes));
        }
        JsonObject result = new JsonObject()
                .put("sleptMs", settings.ms)
                .put("attempt", context.attempt())
                .put("startedAt", startedAt);
        if (settings.ms == 0 || context.cancelled()) {
            return Future.succeededFuture(result);
        }
        Promise<JsonObject> done = Promise.promise();
        long[] timer = {-1};
        context.onCancel(() -> context.vertx().runOnContext(v -> {
            context.vertx().cancelTimer(timer[0]);
            done.tryFail(new IllegalStateException("stopped after " + settings.ms + " ms were asked: told to stop"));
        }));
        step(context, settings, 1, done, result, timer);
        return done.future();
    }

    private void step(
            TaskContext context,
            Settings settings,
            int step,
            Promise<JsonObject> done,
            JsonObject result,
            long[] timer) {
        if (done.future().isComplete()) {
            return;
        }
        int steps = Math.max(1, settings.steps);
        // Spread the remainder so that the steps add up to ms exactly.
        long delay = Math.max(1, settings.ms * step / steps - settings.ms * (step - 1) / steps);
        timer[0] = context.vertx().setTimer(delay, id -> {
            if (done.future().isComplete()) {
                return;
            }
            if (settings.steps > 0) {
                context.progress(100 * step / steps, "step " + step + " of " + steps);
            }
            if (step >= steps) {
                done.tryComplete(result);
            } else {
                step(context, settings, step + 1, done, result, timer);
            }
        });
    }

    private static Settings settings(JsonObject payload) throws InvalidPayloadException {
        if (payload == null) {
            return new Settings(0, 0, 0);
        }
        long ms = integer(payload, "ms", 0, MAX_MS);
        int steps = (int) integer(payload, "steps", 0, MAX_STEPS);
        int failTimes = (int) integer(payload, "failTimes", 0, MAX_FAIL_TIMES);
        return new Settings(ms, steps, failTimes);
    }

    private static long integer(JsonObject payload, String field, long min, long max) throws InvalidPayloadException {
        Object value = payload.getValue(field);
        if (value == null) {
            return 0;
        }
        if (!(value instanceof Integer || value instanceof Long)) {
            throw new InvalidPayloadException(field + " must be an integer from " + min + " to " + max);
        }
        long number = ((Number) value).longValue();
        if (number < min || number > max) {
            throw new InvalidPayloadException(field + " must be an integer from " + min + " to " + max);
        }
        return number;
    }

    private record Settings(long ms, int steps, int failTimes) {}
}
