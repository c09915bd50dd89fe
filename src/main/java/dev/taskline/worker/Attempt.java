package dev.taskline.worker;

import dev.taskline.handler.TaskContext;
import dev.taskline.journal.Journal;
import dev.taskline.model.Heartbeat;
import dev.taskline.model.Lease;
import dev.taskline.model.Parents;
import dev.taskline.model.Task;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * One attempt at a task: the handler's view of it, the timeout, throttled progress writes, the stop
 * signal and what its heartbeats learn (the worker beats every lease it holds in one pass).
 * Whichever ends it first (the handler, the timeout, a lost lease, a release at shutdown) settles
 * {@link #outcome()}; the rest is ignored. All its state lives on the worker's event loop; {@link
 * #progress} and the cancel accessors may be called from any thread (blocking handlers) and hop
 * there.
 */
final class Attempt implements TaskContext {

    private final Vertx vertx;
    private final Context context;
    private final Journal journal;
    private final Task task;
    /**
     * Parsed once per attempt, since the queue keeps only the text (see {@link Task}); null when
     * the text is not a JSON object (written to the journal by something other than a node).
     */
    private final JsonObject payload;

    private final Lease lease;
    private final long progressIntervalNanos;
    private final Promise<Outcome> outcome = Promise.promise();
    private final ProgressListener listener;
    private final long timeoutMs;
    private long timeoutTimer = -1;

    private final JsonArray spawned = new JsonArray();
    private final DurableSteps durable;
    private Parents read = Parents.NONE;
    private java.util.function.BiFunction<String, Integer, Future<JsonObject>> parentPages;
    private Map<String, Object> parents;
    private Map<String, String> parentStates;
    private volatile boolean stopRequested;
    private volatile boolean cancelRequested;
    private final List<Runnable> cancelActions = new ArrayList<>();
    private boolean ended;
    private int percent = -1;
    private String message;
    private boolean dirty;
    private boolean writing;
    private long progressTimer = -1;
    private long lastWriteNanos;

    Attempt(
            Context context,
            AttemptParts parts,
            Task task,
            Lease lease,
            long timeoutMs,
            long progressIntervalMs,
            DurableSteps durable) {
        this.listener = parts.progress;
        this.durable = durable;
        this.vertx = context.owner();
        this.context = context;
        this.journal = parts.journal;
        this.task = task;
        this.payload = parse(task.payloadJson());
        this.lease = lease;
        this.timeoutMs = timeoutMs;
        // The throttle is a rate limit, not business time, so it runs on the monotonic clock: an
        // injected test clock that stands still must not stop progress from being written.
        this.progressIntervalNanos = Duration.ofMillis(progressIntervalMs).toNanos();
        this.lastWriteNanos = System.nanoTime() - progressIntervalNanos;
    }

    /**
     * What a flow task's parents ended with, read before its handler runs; decoded only if the
     * handler asks (a fan-in of thousands costs a handler that ignores it nothing more).
     */
    void parents(Parents read, java.util.function.BiFunction<String, Integer, Future<JsonObject>> pages) {
        this.read = read;
        this.parentPages = pages;
    }

    private synchronized void decodeParents() {
        if (parents != null) {
            return;
        }
        if (read.byReference()) {
            throw new IllegalStateException("this task's " + read.count() + " parents weigh " + read.bytes()
                    + " bytes, more than a task is handed whole (flows.maxParentBytes): read them with parentsPage");
        }
        this.parents = read.values();
        this.parentStates = read.states();
    }

    @Override
    public String flowKey() {
        return task.flowId() == null ? null : task.flowKey();
    }

    @Override
    public synchronized String spawn(JsonObject spawn) {
        if (task.flowId() == null) {
            throw new IllegalStateException("only a task of a flow may spawn tasks into it");
        }
        JsonObject copy = spawn.copy();
        Object key = copy.getValue("key");
        if (key == null) {
            key = task.flowKey() + "." + spawned.size();
            copy.put("key", key);
        }
        spawned.add(copy);
        return key.toString();
    }

    /** What the handler spawned (empty for none): it goes in with the attempt's success. */
    synchronized JsonArray spawned() {
        return spawned.copy();
    }

    @Override
    public Map<String, Object> parents() {
        decodeParents();
        return parents;
    }

    @Override
    public Map<String, String> parentStates() {
        decodeParents();
        return parentStates;
    }

    @Override
    public int parentCount() {
        return read.count();
    }

    @Override
    public Future<JsonObject> parentsPage(String after, int limit) {
        if (limit < 1 || limit > 1000) {
            return Future.failedFuture(new IllegalArgumentException("limit must be from 1 to 1000"));
        }
        return parentPages == null
                ? Future.succeededFuture(
                        new JsonObject().put("items", new JsonArray()).putNull("next"))
                : parentPages.apply(after, limit);
    }

    /** Settles once with whatever ended the attempt first. */
    Future<Outcome> outcome() {
        return outcome.future();
    }

    /** The handler's own end; ignored if something else ended the attempt first. */
    void handlerDone(Future<JsonObject> result) {
        result.onComplete(done -> outcome.tryComplete(
                done.succeeded()
                        ? new Outcome.Succeeded(done.result() == null ? new JsonObject() : done.result())
                        : new Outcome.Failed(done.cause())));
        // A handler that answered at once (a short, non-blocking one) needs no timer at all.
        if (!outcome.future().isComplete()) {
            timeoutTimer = vertx.setTimer(timeoutMs, id -> {
                stop();
                outcome.tryComplete(new Outcome.TimedOut(timeoutMs));
            });
        }
    }

    /** The node shuts down and will not wait for this attempt any longer. */
    void release() {
        stop();
        outcome.tryComplete(new Outcome.Released());
    }

    /** Someone asked to cancel the task: tell the handler; the attempt ends when it stops. */
    void requestCancel() {
        cancelRequested = true;
        stop();
    }

    boolean cancelRequested() {
        return cancelRequested;
    }

    Lease lease() {
        return lease;
    }

    Task task() {
        return task;
    }

    @Override
    public UUID taskId() {
        return task.id();
    }

    @Override
    public int attempt() {
        return lease.attempt();
    }

    @Override
    public String type() {
        return task.type();
    }

    @Override
    public long leaseVersion() {
        return lease.version();
    }

    private static JsonObject parse(String json) {
        try {
            return new JsonObject(json);
        } catch (RuntimeException e) {
            return null;
        }
    }

    /** False when the journal held a payload that is not a JSON object: no handler can run it. */
    boolean payloadReadable() {
        return payload != null;
    }

    @Override
    public java.time.Instant scheduledFor() {
        return task.scheduledFor();
    }

    @Override
    public JsonObject payload() {
        return payload;
    }

    @Override
    public Vertx vertx() {
        return vertx;
    }

    @Override
    public boolean cancelled() {
        return stopRequested || durable.compensating();
    }

    /** The task's durable steps, as this attempt reads and writes them. */
    DurableSteps durable() {
        return durable;
    }

    @Override
    public <T> Future<T> step(String name, java.util.function.Supplier<Future<T>> code) {
        return durable.step(name, code);
    }

    @Override
    public Future<JsonObject> stepsDone() {
        return durable.all(task.readsSteps(lease));
    }

    @Override
    public Future<Boolean> stepDone(String name) {
        return durable.done(name);
    }

    @Override
    public Future<Void> sleep(String name, Duration duration) {
        return durable.sleepUntil(name, durable.now().plus(duration));
    }

    @Override
    public Future<Void> sleepUntil(String name, java.time.Instant until) {
        return durable.sleepUntil(name, until);
    }

    @Override
    public Future<java.util.Optional<JsonObject>> waitForSignal(String step, String name, Duration timeout) {
        return durable.waitForSignal(step, name, timeout);
    }

    @Override
    public Future<java.util.Optional<JsonObject>> waitForEvent(
            String step, String name, String field, Object value, Duration timeout) {
        return durable.waitForEvent(step, name, field, value, timeout);
    }

    @Override
    public void onCancel(Runnable action) {
        onContext(() -> {
            if (stopRequested) {
                action.run();
            } else {
                cancelActions.add(action);
            }
        });
    }

    @Override
    public void progress(int percent, String message) {
        int clamped = Math.max(0, Math.min(100, percent));
        String text = message == null ? null : message.length() > 500 ? message.substring(0, 500) : message;
        if (text != null && dev.taskline.model.StoredJson.flaw(text) != null) {
            // What the journal cannot keep would fail every progress write of the attempt.
            text = Errors.storable(text);
        }
        String kept = text;
        onContext(() -> onProgress(clamped, kept));
    }

    /** Stops timers once the outcome is being recorded; late progress is dropped from here on. */
    void end() {
        ended = true;
        if (timeoutTimer != -1) {
            vertx.cancelTimer(timeoutTimer);
        }
        if (progressTimer != -1) {
            vertx.cancelTimer(progressTimer);
        }
    }

    private void stop() {
        onContext(() -> {
            if (stopRequested) {
                return;
            }
            stopRequested = true;
            for (Runnable action : cancelActions) {
                try {
                    action.run();
                } catch (RuntimeException e) {
                    // A handler's stop action failing must not keep the attempt from ending.
                }
            }
            cancelActions.clear();
        });
    }

    private void onContext(Runnable action) {
        if (Vertx.currentContext() == context) {
            action.run();
        } else {
            context.runOnContext(v -> action.run());
        }
    }

    /** What a heartbeat of this attempt's lease learned. */
    void heartbeat(Heartbeat beat) {
        if (ended) {
            return;
        }
        switch (beat) {
            case LOST -> {
                stop();
                outcome.tryComplete(new Outcome.LeaseLost());
            }
            case CANCEL_REQUESTED -> requestCancel();
            case HELD -> {}
        }
    }

    private void onProgress(int percent, String message) {
        if (ended) {
            return;
        }
        this.percent = percent;
        this.message = message;
        // Watchers see every report at once; the journal gets the latest at a bounded rate.
        listener.progress(task.id(), percent, message);
        dirty = true;
        writeProgress();
    }

    private void writeProgress() {
        if (!dirty || writing || progressTimer != -1 || ended) {
            return;
        }
        long waitNanos = lastWriteNanos + progressIntervalNanos - System.nanoTime();
        if (waitNanos > 0) {
            progressTimer = vertx.setTimer(Math.max(1, waitNanos / 1_000_000), id -> {
                progressTimer = -1;
                writeProgress();
            });
            return;
        }
        dirty = false;
        writing = true;
        lastWriteNanos = System.nanoTime();
        journal.progress(lease, percent, message).onComplete(done -> {
            writing = false;
            writeProgress();
        });
    }
}
