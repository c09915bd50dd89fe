package dev.taskline.handler;

import io.vertx.core.Future;
import io.vertx.core.Vertx;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;
import java.util.Optional;
import java.util.UUID;
import java.util.function.Supplier;

/** What a handler knows about the attempt it runs. */
public interface TaskContext {

    UUID taskId();

    /** The task's type, as submitted. */
    String type();

    /** The version of the lease this attempt holds; every write it makes is fenced by it. */
    long leaseVersion();

    /** 1 for the first attempt; grows with each claim of the task. */
    int attempt();

    /**
     * The tick a schedule made this task for (the time it was due by its cron or interval, which the
     * task's own start may follow by a little or, caught up, by much); null for a task no schedule made.
     */
    default java.time.Instant scheduledFor() {
        return null;
    }

    /** The task's key in its flow; null for a task of no flow. */
    default String flowKey() {
        return null;
    }

    /**
     * A flow task's parents, by key: each one's result, or, for a parent that did not succeed (a
     * task that joins {@code settled} or {@code any} runs after such a parent), its error; empty for
     * a task with no parents. Read from the journal as the attempt starts, when they weigh at most
     * {@code flows.maxParentBytes} together.
     *
     * @throws IllegalStateException when they weigh more: read them with {@link #parentsPage}
     */
    default java.util.Map<String, Object> parents() {
        return java.util.Map.of();
    }

    /** How each of {@link #parents()} ended, by key: {@code succeeded}, {@code failed}, {@code cancelled} or {@code expired}. */
    default java.util.Map<String, String> parentStates() {
        return java.util.Map.of();
    }

    /** How many parents the task has (0 for a task of no flow, or a root). */
    default int parentCount() {
        return 0;
    }

    /**
     * A page of the parents, by key, whatever they weigh: {@code {items: [{key, state, result |
     * error}], next}}, after key {@code after} (null: the first page), at most {@code limit} (1 to
     * 1000) of them and at most {@code flows.maxParentBytes} of values (a heavier single one comes
     * alone). {@code next}: the {@code after} of the next page, null after the last. Read from the
     * journal when asked, as {@code GET /api/tasks/{id}/parents} reads them.
     */
    default Future<JsonObject> parentsPage(String after, int limit) {
        return Future.succeededFuture(new JsonObject()
                .put("items", new io.vertx.core.json.JsonArray())
                .putNull("next"));
    }

    /**
     * Adds a task to this task's flow, committed with this attempt's success and fenced by its lease
     * like it (nothing is added by an attempt that fails or loses its lease). {@code task} is a task
     * as a flow's {@code tasks} takes it: type, payload and options, and optionally key (by default
     * this task's key and the spawn's place: {@code fetch.0}, {@code fetch.1}), dependsOn (other
     * tasks of this attempt's spawn) and join. It runs after this task; this task's dependents wait
     * for it too, unless another spawned task depends on it. Returns its key.
     *
     * @throws IllegalStateException for a task in no flow
     */
    default String spawn(io.vertx.core.json.JsonObject task) {
        throw new IllegalStateException("only a task of a flow may spawn tasks into it");
    }

    /**
     * Runs a durable step: the first time the task reaches {@code name}, {@code code} runs and its
     * result (a JSON value: JsonObject, JsonArray, String, Number, Boolean or null) is journaled,
     * fenced by this attempt's lease, before the returned future completes with it. On every later
     * run of the task (a retry, a takeover after a crash, a resume after a sleep or wait) the
     * journaled result is returned and {@code code} does not run. The value given back is the
     * journaled one, decoded from JSON (a number as Integer, Long or Double by its size), on the
     * first run as on the later ones. Code that fails fails the step and, as any failure, the
     * attempt; the retry passes over the steps already done. A crash inside {@code code}, before its
     * result is journaled, runs it again: use {@link #stepId} as the idempotency key of what it does
     * outside. A blocking handler may {@code await()} the future on its worker thread.
     *
     * @throws IllegalArgumentException for a name that is empty or longer than 200 characters
     */
    default <T> Future<T> step(String name, Supplier<Future<T>> code) {
        return Future.failedFuture(new UnsupportedOperationException("durable steps need a node's attempt"));
    }

    /**
     * Whether step {@code name} was done by this or an earlier run of the task, without running it:
     * what an undo asks to know which effects to reverse.
     */
    default Future<Boolean> stepDone(String name) {
        return Future.failedFuture(new UnsupportedOperationException("durable steps need a node's attempt"));
    }

    /** The steps done by this and earlier runs of the task, by name in the order reached, with their results. */
    default Future<JsonObject> stepsDone() {
        return Future.succeededFuture(new JsonObject());
    }

    /** {@code taskId:name}: the same on every run of the task, unique to the step; an idempotency key. */
    default String stepId(String name) {
        return taskId() + ":" + name;
    }

    /**
     * Sleeps durably: the first time the task reaches {@code name} the attempt ends suspended, the
     * task pending again, due at the end of the sleep, holding no slot and no attempt; when it runs
     * again the future completes. The end is journaled the first time, so a resumed or retried
     * handler does not sleep from the start again. The returned future fails with {@link
     * Suspension} meanwhile: return it from the handler (or let it fail the chain), do not recover
     * it. While the task compensates ({@link #cancelled()} after a compensating cancel) it completes
     * at once.
     */
    default Future<Void> sleep(String name, Duration duration) {
        return sleepUntil(name, Instant.now().plus(duration));
    }

    /** As {@link #sleep}, to an instant. */
    default Future<Void> sleepUntil(String name, Instant until) {
        return Future.failedFuture(new UnsupportedOperationException("durable steps need a node's attempt"));
    }

    /**
     * Waits durably for the signal {@code name} ({@code POST /api/tasks/{id}/signals/{name}}), as
     * step {@code name}: its payload, or empty when {@code timeout} (null: none) passed first. The
     * attempt ends suspended as for {@link #sleep}; a signal sent before the wait began is kept and
     * taken by it (several of one name, in order, one per wait: give each wait its own step with
     * {@link #waitForSignal(String, String, Duration)}).
     */
    default Future<Optional<JsonObject>> waitForSignal(String name, Duration timeout) {
        return waitForSignal(name, name, timeout);
    }

    /** As {@link #waitForSignal(String, Duration)}, in step {@code step}. */
    default Future<Optional<JsonObject>> waitForSignal(String step, String name, Duration timeout) {
        return Future.failedFuture(new UnsupportedOperationException("durable steps need a node's attempt"));
    }

    /**
     * Waits durably for an event ({@code POST /api/events}) named {@code name} whose {@code field}
     * (a dotted path starting {@code data.}, as {@code data.orderId}) equals {@code value} (a
     * String, Number or Boolean), as step {@code name}: the event ({@code id}, {@code name}, {@code
     * data}), or empty on timeout. An event that came while this attempt ran towards the wait is
     * taken too.
     */
    default Future<Optional<JsonObject>> waitForEvent(String name, String field, Object value, Duration timeout) {
        return waitForEvent(name, name, field, value, timeout);
    }

    /** As {@link #waitForEvent(String, String, Object, Duration)}, in step {@code step}. */
    default Future<Optional<JsonObject>> waitForEvent(
            String step, String name, String field, Object value, Duration timeout) {
        return Future.failedFuture(new UnsupportedOperationException("durable steps need a node's attempt"));
    }

    /** The task's payload: a copy of its own for this attempt, so changes to it are not kept. */
    JsonObject payload();

    /** For timers and other non-blocking work; never block its event loop. */
    Vertx vertx();

    /**
     * Reports progress. Cheap to call often: the latest value is kept and written to the journal at a
     * bounded rate, and only while this attempt still holds its lease.
     */
    void progress(int percent, String message);

    /**
     * Whether this attempt should stop: the task was cancelled, its attempt timed out, or the node is
     * shutting down and its grace period ended. A long handler checks it between steps. True too for
     * a task a compensating cancel resumed: its handler undoes what its steps did (in steps of its
     * own) and returns; that success ends the task cancelled.
     */
    boolean cancelled();

    /** Runs {@code action} once when the attempt is told to stop (at once if it already was). */
    void onCancel(Runnable action);
}
