package dev.taskline.worker;

import dev.taskline.model.Wait;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;

/**
 * How an attempt ends, decided by {@link Endings} and written by {@link EndWriter}: one value per
 * journal verb, so that what is decided can be tested without a journal and what is written has
 * one place.
 */
sealed interface End {

    /**
     * Succeeded with {@code result}, adding {@code spawn}'s tasks to its flow (null or empty: none).
     * With {@code cancelWins}, a cancel asked meanwhile ends it cancelled instead (the journal knows;
     * a remote worker could not).
     */
    record Succeeded(JsonObject result, JsonArray spawn, boolean cancelWins) implements End {

        boolean spawns() {
            return spawn != null && !spawn.isEmpty();
        }
    }

    /** Failed this attempt; pending again at {@code due}, the attempt counted. */
    record RetryAt(Instant due, JsonObject error) implements End {}

    /** Failed for good ({@code permanent}: not for want of attempts); cancelled instead as above. */
    record Failed(JsonObject error, boolean permanent, boolean cancelWins) implements End {}

    /** Pending again at {@code due}, the attempt not counted. */
    record Snoozed(Instant due) implements End {}

    /** Waiting on {@code waitFor} (a sleep, a signal, an event), its steps kept. */
    record Suspended(Wait waitFor) implements End {}

    /** Cancelled as asked, keeping what the attempt ended with. */
    record Cancelled(JsonObject result, JsonObject error) implements End {}

    /** Handed back after it ran (a node stopping, a worker putting it back): pending at once, the attempt not counted. */
    record Released() implements End {}

    /** Handed back before its handler started: pending at once, as if never claimed. */
    record HandedBack() implements End {}

    /** The lease was lost: another holds the task, and nothing is written. */
    record Fenced() implements End {}
}
