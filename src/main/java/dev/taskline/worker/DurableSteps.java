package dev.taskline.worker;

import dev.taskline.handler.Suspension;
import dev.taskline.model.DurableStart;
import dev.taskline.model.Instants;
import dev.taskline.model.Lease;
import dev.taskline.model.StoredJson;
import dev.taskline.model.Wait;
import dev.taskline.model.problem.LeaseLostException;
import io.vertx.core.Future;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.Optional;
import java.util.function.Supplier;

/**
 * The durable part of one attempt: the steps its task did before (read from the journal once, when
 * the attempt starts for a task known to have some, or when the handler first asks), steps written
 * as the handler runs them, and the wait it asked to suspend on. Methods may be called from any
 * thread (blocking handlers); the maps are concurrent and the load is shared.
 */
final class DurableSteps {

    static final int MAX_NAME = 200;

    private final Suspensions writes;
    private final Lease lease;
    private final Clock clock;
    private final long maxBytes;
    private final Map<String, String> steps = java.util.Collections.synchronizedMap(new java.util.LinkedHashMap<>());
    private volatile Future<Void> loaded;
    private volatile boolean compensating;
    private volatile Wait suspend;

    /** @param maxBytes the most bytes of JSON a step's result may have, as a result (http.bodyLimitBytes) */
    DurableSteps(Suspensions writes, Lease lease, Clock clock, long maxBytes) {
        this.maxBytes = maxBytes;
        this.writes = writes;
        this.lease = lease;
        this.clock = clock;
    }

    /** Reads what the task's steps did; once, however many ask. */
    synchronized Future<Void> load() {
        if (loaded == null) {
            loaded = writes.steps().load(java.util.List.of(lease)).compose(found -> {
                DurableStart start = found.get(lease.taskId());
                if (start == null) {
                    return Future.failedFuture(new LeaseLostException(lease.taskId(), null));
                }
                compensating = start.compensating();
                steps.putAll(start.steps());
                return Future.succeededFuture();
            });
        }
        return loaded;
    }

    /** The steps as a claim read them (remote claims and pushes read them for the worker). */
    void loaded(DurableStart start) {
        compensating = start.compensating();
        steps.putAll(start.steps());
        loaded = Future.succeededFuture();
    }

    boolean compensating() {
        return compensating;
    }

    /** The wait the handler asked to suspend on; null when it asked none. */
    Wait suspend() {
        return suspend;
    }

    @SuppressWarnings("unchecked")
    <T> Future<T> step(String name, Supplier<Future<T>> code) {
        checkName("a step's name", name);
        return load().compose(v -> {
            String done = steps.get(name);
            if (done != null) {
                return Future.succeededFuture((T) Json.decodeValue(done));
            }
            Future<T> ran;
            try {
                ran = code.get();
            } catch (RuntimeException e) {
                ran = Future.failedFuture(e);
            }
            if (ran == null) {
                ran = Future.failedFuture(new IllegalStateException("step '" + name + "' returned no future"));
            }
            return ran.compose(result -> {
                        // What the journal refuses would fail the attempt with its raw message.
                        String flaw = StoredJson.flaw(result, "step '" + name + "''s result", maxBytes);
                        return flaw == null
                                ? writes.step(lease, name, Json.encode(result))
                                : Future.<dev.taskline.model.StepWritten>failedFuture(
                                        new IllegalArgumentException(flaw));
                    })
                    .compose(kept -> {
                        if (kept == null) {
                            return Future.failedFuture(new LeaseLostException(lease.taskId(), null));
                        }
                        steps.put(name, kept.resultJson());
                        return Future.succeededFuture((T) Json.decodeValue(kept.resultJson()));
                    });
        });
    }

    /**
     * The steps done, decoded. A task that never ran nor slept has none, and is not asked: what a
     * push call sends for every task costs a fresh one no read.
     */
    Future<JsonObject> all(boolean mayHaveSteps) {
        if (!mayHaveSteps && loaded == null) {
            return Future.succeededFuture(new JsonObject());
        }
        return load().map(v -> {
            JsonObject all = new JsonObject();
            steps.forEach((name, json) -> all.put(name, Json.decodeValue(json)));
            return all;
        });
    }

    Future<Boolean> done(String name) {
        return load().map(v -> steps.containsKey(name));
    }

    Future<Void> sleepUntil(String name, Instant until) {
        checkName("a sleep's name", name);
        checkEnd("a sleep's end", until);
        return load().compose(v ->
                steps.containsKey(name) || compensating ? Future.succeededFuture() : suspend(Wait.sleep(name, until)));
    }

    Future<Optional<JsonObject>> waitForSignal(String step, String name, Duration timeout) {
        checkName("a wait's step name", step);
        checkName("a signal's name", name);
        return waitFor(step, Wait.signal(step, name, deadline(timeout)), "payload");
    }

    Future<Optional<JsonObject>> waitForEvent(String step, String name, String field, Object value, Duration timeout) {
        checkName("a wait's step name", step);
        checkName("an event's name", name);
        if (field == null || !field.startsWith("data.") || field.length() <= "data.".length()) {
            throw new IllegalArgumentException("an event's field is a path into its data: data.orderId");
        }
        if (!(value instanceof String || value instanceof Number || value instanceof Boolean)) {
            throw new IllegalArgumentException("an event's value to match is a String, a Number or a Boolean");
        }
        return waitFor(step, Wait.event(step, name, field, String.valueOf(value), deadline(timeout)), "event");
    }

    private Future<Optional<JsonObject>> waitFor(String step, Wait wait, String key) {
        return load().compose(v -> {
            String done = steps.get(step);
            if (done != null) {
                JsonObject result = new JsonObject(done);
                return Future.succeededFuture(Optional.ofNullable(result.getJsonObject(key)));
            }
            return compensating ? Future.succeededFuture(Optional.empty()) : suspend(wait);
        });
    }

    private <T> Future<T> suspend(Wait wait) {
        suspend = wait;
        return Future.failedFuture(new Suspension(wait.step()));
    }

    /** The node's time, which the journal's wake-ups are read on. */
    Instant now() {
        return clock.instant();
    }

    private Instant deadline(Duration timeout) {
        if (timeout == null) {
            return null;
        }
        if (timeout.isNegative() || timeout.compareTo(Instants.MAX_AHEAD) > 0) {
            throw new IllegalArgumentException("a wait's timeout must be from 0 to a year ("
                    + Instants.MAX_AHEAD.toDays() + " days), got " + timeout);
        }
        return clock.instant().plus(timeout);
    }

    /** A name the journal keeps as it is: 1 to {@value #MAX_NAME} characters, no NUL (see {@link StoredJson}). */
    private static void checkName(String what, String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_NAME || StoredJson.flaw(name) != null) {
            throw new IllegalArgumentException(what + " is 1 to " + MAX_NAME + " characters, none of them NUL nor a"
                    + " lone surrogate" + (name == null ? "" : ", got " + describe(name)));
        }
    }

    private static String describe(String name) {
        String shown = Errors.storable(name.length() > 64 ? name.substring(0, 64) + "..." : name);
        return "'" + shown + "' (" + name.length() + " characters)";
    }

    /** {@code until}, a wait's end, when the journal can keep it (see {@link Instants}); else an IllegalArgumentException. */
    private Instant checkEnd(String what, Instant until) {
        String flaw = until == null ? null : Instants.flaw(until, clock.instant());
        if (flaw != null) {
            throw new IllegalArgumentException(what + " " + flaw);
        }
        return until;
    }
}
