package dev.taskline.worker;

import dev.taskline.config.QueueConfig;
import dev.taskline.handler.PermanentTaskException;
import dev.taskline.handler.SnoozeException;
import dev.taskline.model.StoredJson;
import dev.taskline.model.Wait;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.TenantLimitException;
import dev.taskline.model.problem.TooManyBlockedException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.function.DoubleSupplier;

/**
 * Decides how an attempt ends, for attempts run here, pushed to a target, or run by a remote
 * worker: one retry policy, one order of rules. Pure: what it decides depends only on its arguments,
 * so each rule is tested without a node (EndingsTest); {@link EndWriter} writes what it decides.
 */
final class Endings {

    private Endings() {}

    /**
     * What the deciding needs to know of the attempt besides its outcome.
     *
     * @param attempt     the attempt that ends, from 1 (the lease's)
     * @param cancelAsked a cancel was seen asked for (on this node's heartbeat)
     * @param waitFor     what the handler asked to wait on before it returned (null: nothing)
     * @param spawned     what the handler spawned (empty: nothing)
     */
    record Attempted(int attempt, int maxAttempts, boolean cancelAsked, Wait waitFor, JsonArray spawned) {

        /** A remote worker's attempt: what it spawned and waits on come with its outcome. */
        static Attempted remote(int attempt, int maxAttempts) {
            return new Attempted(attempt, maxAttempts, false, null, null);
        }
    }

    /**
     * The queue's side of the deciding.
     *
     * @param maxResultBytes the most bytes of JSON a result may have (http.bodyLimitBytes)
     * @param jitter         draws from [0, 1] for the backoff, drawn only when a retry is decided
     */
    record Policy(long backoffBaseMs, long backoffCapMs, long maxResultBytes, DoubleSupplier jitter) {

        static Policy of(QueueConfig config, long maxResultBytes, DoubleSupplier jitter) {
            return new Policy(config.backoffBaseMs(), config.backoffCapMs(), maxResultBytes, jitter);
        }

        long backoffMs(int failedAttempt) {
            return Backoff.delayMs(failedAttempt, backoffBaseMs, backoffCapMs, jitter.getAsDouble());
        }
    }

    static End decide(Attempted attempted, Outcome outcome, Policy policy, Instant now) {
        if (outcome instanceof Outcome.Succeeded s) {
            return succeeded(attempted, s.result(), policy);
        }
        if (outcome instanceof Outcome.Failed f) {
            return failed(attempted, f.cause(), policy, now);
        }
        if (outcome instanceof Outcome.TimedOut t) {
            // Not cancelled even when asked: the handler was told to stop and did not.
            return failedOrRetried(attempted, timeout(t.timeoutMs()), false, false, null, policy, now);
        }
        if (outcome instanceof Outcome.Completed c) {
            return new End.Succeeded(c.result(), c.spawn(), true);
        }
        if (outcome instanceof Outcome.Reported r) {
            return failedOrRetried(attempted, r.error(), !r.retry(), true, r.retryAfterMs(), policy, now);
        }
        if (outcome instanceof Outcome.PutBack p) {
            return p.snoozeMs() == null ? new End.Released() : new End.Snoozed(now.plusMillis(p.snoozeMs()));
        }
        if (outcome instanceof Outcome.Suspending s) {
            return new End.Suspended(s.waitFor());
        }
        if (outcome instanceof Outcome.Released) {
            return new End.Released();
        }
        return new End.Fenced(); // Outcome.LeaseLost
    }

    /**
     * A task leased here whose handler never started (a queue paused, a node stopping, a claim no
     * worker took): cancelled when that was asked, else handed back, pending at once as if never
     * claimed.
     */
    static End unstarted(boolean cancelAsked) {
        return cancelAsked ? new End.Cancelled(null, null) : new End.HandedBack();
    }

    /**
     * What an attempt here ends as when the journal refused what it spawned: no room now (a tenant's
     * bound, a flow's blocked tasks) is a failure like any, tried again after its backoff; a spawn
     * that breaks a rule would be spawned again by the same code, so it fails for good. Null for any
     * other failure (the journal down): nothing is decided, the lease's end hands the task on.
     */
    static End spawnRefused(Attempted attempted, Throwable refusal, Policy policy, Instant now) {
        if (refusal instanceof TenantLimitException || refusal instanceof TooManyBlockedException) {
            return decide(attempted, new Outcome.Failed(refusal), policy, now);
        }
        if (refusal instanceof InvalidTaskException) {
            return new End.Failed(Errors.describe(new PermanentTaskException(refusal.getMessage())), true, false);
        }
        return null;
    }

    /**
     * What an attempt here ends as when the journal refused its end for good (a value it cannot
     * keep: see Journal.refusal): failed with the reason, or cancelled when someone asked. Left
     * running, the task would be claimed again at its lease's end, run again and refused again, past
     * its attempts.
     */
    static End refused(String reason) {
        return new End.Failed(
                Errors.describe(new PermanentTaskException("the attempt's end could not be recorded: " + reason)),
                true,
                true);
    }

    private static End succeeded(Attempted attempted, JsonObject result, Policy policy) {
        // What no request could bring is not kept from a handler either: the journal must be able to
        // read every result back (see StoredJson), and to refuse it later would leave the task running.
        String flaw = StoredJson.flaw(result, "the result", policy.maxResultBytes());
        if (attempted.cancelAsked()) {
            return new End.Cancelled(flaw == null ? result : null, null);
        }
        if (flaw != null) {
            return new End.Failed(
                    Errors.describe(new PermanentTaskException("the attempt's result cannot be kept: " + flaw)),
                    true,
                    false);
        }
        return new End.Succeeded(result, attempted.spawned(), false);
    }

    private static End failed(Attempted attempted, Throwable cause, Policy policy, Instant now) {
        if (attempted.cancelAsked()) {
            return new End.Cancelled(null, Errors.describe(cause));
        }
        if (attempted.waitFor() != null) {
            // Even when the handler recovered from its Suspension: it asked to wait.
            return new End.Suspended(attempted.waitFor());
        }
        if (cause instanceof SnoozeException snooze) {
            return new End.Snoozed(now.plus(snooze.delay()));
        }
        boolean permanent = cause instanceof PermanentTaskException;
        return failedOrRetried(attempted, Errors.describe(cause), permanent, false, null, policy, now);
    }

    /**
     * Tried again while it may be and attempts are left, at {@code retryAfterMs} from now (null: the
     * queue's backoff); else failed for good.
     */
    private static End failedOrRetried(
            Attempted attempted,
            JsonObject error,
            boolean permanent,
            boolean cancelWins,
            Long retryAfterMs,
            Policy policy,
            Instant now) {
        if (!permanent && attempted.attempt() < attempted.maxAttempts()) {
            long delay = retryAfterMs != null ? retryAfterMs : policy.backoffMs(attempted.attempt());
            return new End.RetryAt(now.plusMillis(delay), error);
        }
        return new End.Failed(error, permanent, cancelWins);
    }

    private static JsonObject timeout(long timeoutMs) {
        return new JsonObject()
                .put("type", "timeout")
                .put("message", "the attempt ran longer than " + timeoutMs + " ms");
    }
}
