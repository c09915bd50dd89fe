package dev.taskline.testing;

import dev.taskline.handler.TaskContext;
import dev.taskline.handler.TaskHandler;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.charset.StandardCharsets;
import java.nio.file.Files;
import java.nio.file.Path;
import java.nio.file.StandardOpenOption;
import java.time.Duration;
import java.util.Map;
import java.util.Optional;
import java.util.concurrent.BlockingQueue;
import java.util.concurrent.ConcurrentHashMap;
import java.util.concurrent.LinkedBlockingQueue;
import java.util.concurrent.TimeUnit;
import java.util.concurrent.atomic.AtomicInteger;

/**
 * {@code steps-probe}: runs the durable operations its payload lists, in order, and answers what
 * each returned. {@code ops} items: {@code {"step": name, "failTimes"?, "holdMs"?}} (its code
 * counts a run, appends an effect line to {@code payload.effects} if given, fails its first {@code
 * failTimes} runs, and on the task's first attempt holds {@code holdMs} before returning); {@code
 * {"sleep": name, "ms"}}; {@code {"signal": name, "step"?, "timeoutMs"?}}; {@code {"event": name,
 * "field", "value", "step"?, "timeoutMs"?}}; {@code {"holdMs": n}} (between steps, first attempt
 * only); {@code {"latch": name}} (waits until the test opens it, announced on {@link #latched}).
 * Runs of step code are counted by {@link TaskContext#stepId}, for tests in the same JVM.
 */
public final class StepsProbeHandler implements TaskHandler {

    private static final Map<String, AtomicInteger> RUNS = new ConcurrentHashMap<>();
    private static final Map<String, Promise<Void>> LATCHES = new ConcurrentHashMap<>();
    private static final BlockingQueue<String> LATCHED = new LinkedBlockingQueue<>();

    @Override
    public String type() {
        return "steps-probe";
    }

    /** How many times the code of step {@code name} of task {@code taskId} ran in this JVM. */
    public static int runs(String taskId, String name) {
        AtomicInteger n = RUNS.get(taskId + ":" + name);
        return n == null ? 0 : n.get();
    }

    /** Waits until a handler stands at latch {@code name} (its task id answered). */
    public static String latched(Duration timeout) throws InterruptedException {
        String at = LATCHED.poll(timeout.toMillis(), TimeUnit.MILLISECONDS);
        if (at == null) {
            throw new AssertionError("no handler reached a latch within " + timeout);
        }
        return at;
    }

    /** Lets the handler standing at latch {@code name} of task {@code taskId} go on. */
    public static void open(String taskId, String name) {
        LATCHES.computeIfAbsent(taskId + ":" + name, k -> Promise.promise()).tryComplete();
    }

    @Override
    public Future<JsonObject> run(TaskContext ctx) {
        JsonArray ops = ctx.payload().getJsonArray("ops", new JsonArray());
        JsonObject results = new JsonObject();
        return next(ctx, ops, 0, results)
                .map(v -> new JsonObject().put("results", results).put("cancelled", ctx.cancelled()));
    }

    private Future<Void> next(TaskContext ctx, JsonArray ops, int i, JsonObject results) {
        if (i == ops.size()) {
            return Future.succeededFuture();
        }
        JsonObject op = ops.getJsonObject(i);
        return one(ctx, op, results).compose(v -> next(ctx, ops, i + 1, results));
    }

    private Future<Void> one(TaskContext ctx, JsonObject op, JsonObject results) {
        if (op.containsKey("sleep")) {
            return ctx.sleep(op.getString("sleep"), Duration.ofMillis(op.getLong("ms")));
        }
        if (op.containsKey("signal")) {
            String step = op.getString("step", op.getString("signal"));
            return ctx.waitForSignal(step, op.getString("signal"), timeout(op)).map(got -> record(results, step, got));
        }
        if (op.containsKey("event")) {
            String step = op.getString("step", op.getString("event"));
            return ctx.waitForEvent(
                            step, op.getString("event"), op.getString("field"), op.getValue("value"), timeout(op))
                    .map(got -> record(results, step, got));
        }
        if (op.containsKey("step")) {
            String name = op.getString("step");
            return ctx.<Object>step(name, () -> runStep(ctx, op, name)).map(r -> {
                results.put(name, r);
                return null;
            });
        }
        if (op.containsKey("latch")) {
            String key = ctx.taskId() + ":" + op.getString("latch");
            Promise<Void> latch = LATCHES.computeIfAbsent(key, k -> Promise.promise());
            LATCHED.add(ctx.taskId().toString());
            return latch.future();
        }
        if (op.containsKey("holdMs") && ctx.attempt() == 1) {
            return ctx.vertx().timer(op.getLong("holdMs")).mapEmpty();
        }
        return Future.succeededFuture();
    }

    private static Void record(JsonObject results, String step, Optional<JsonObject> got) {
        results.put(step, got.orElse(null));
        return null;
    }

    private static Duration timeout(JsonObject op) {
        return op.getLong("timeoutMs") == null ? null : Duration.ofMillis(op.getLong("timeoutMs"));
    }

    private static Future<Object> runStep(TaskContext ctx, JsonObject op, String name) {
        int run =
                RUNS.computeIfAbsent(ctx.stepId(name), k -> new AtomicInteger()).incrementAndGet();
        String effects = ctx.payload().getString("effects");
        if (effects != null) {
            try {
                Files.writeString(
                        Path.of(effects),
                        ctx.stepId(name) + "\n",
                        StandardCharsets.UTF_8,
                        StandardOpenOption.CREATE,
                        StandardOpenOption.APPEND);
            } catch (IOException e) {
                throw new UncheckedIOException(e);
            }
        }
        if (run <= op.getInteger("failTimes", 0)) {
            return Future.failedFuture(new IllegalStateException("step " + name + " fails its run " + run));
        }
        JsonObject result = new JsonObject().put("step", name).put("run", run).put("attempt", ctx.attempt());
        Long hold = op.getLong("holdMs");
        if (hold != null && ctx.attempt() == 1) {
            return ctx.vertx().timer(hold).map(v -> result);
        }
        return Future.succeededFuture(result);
    }
}
