package dev.taskline.admission;

import dev.taskline.model.problem.DeadlineUnmeetableException;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.QueueFullException;
import dev.taskline.model.problem.TenantLimitException;
import dev.taskline.model.problem.TooManyBlockedException;
import io.vertx.core.Future;
import java.util.function.Supplier;

/**
 * The one place that says what an Idempotency-Key is and where it lives in the journal, for every
 * door that takes one: tasks and batches, flows, the tasks an event's triggers start (signals keep
 * theirs on their task, events their id per tenant, each in its own table). Each kind of request
 * and each tenant has a namespace of its own that no key and no tenant name can reach into: a
 * tenant name has no control character, and neither has a key (refused, 422), so the separators
 * below cannot be forged. And a request that found no room while a twin with the same key was
 * being admitted gets the twin's answer rather than the refusal, whatever it submits.
 */
public final class Idempotency {

    public static final int MAX_KEY_LENGTH = 255;

    /** What a key was given for: each kind keeps its keys apart from the others'. */
    public enum Kind {
        /** A task or a batch (one namespace: a key names one submission, single or batched). */
        TASKS(""),
        FLOW("flow"),
        TRIGGER("trigger");

        private final String tag;

        Kind(String tag) {
            this.tag = tag;
        }
    }

    private Idempotency() {}

    /** A key as a caller gives it (null: none): 1 to {@value #MAX_KEY_LENGTH} characters, no control character; else 422. */
    public static void check(String key) {
        if (key == null) {
            return;
        }
        if (key.isBlank() || key.length() > MAX_KEY_LENGTH) {
            throw new InvalidTaskException("Idempotency-Key must be 1 to " + MAX_KEY_LENGTH + " characters");
        }
        for (int i = 0; i < key.length(); i++) {
            if (Character.isISOControl(key.charAt(i))) {
                throw new InvalidTaskException("Idempotency-Key must hold no control character");
            }
        }
    }

    /**
     * Where {@code key} of {@code kind} from {@code tenant} (null: none) lives in the journal. Task
     * keys keep the form they always had ({@code key}, or {@code tenant U+0001 key}), so that keys
     * live across an upgrade still answer; the other kinds start with U+0002 and their tag, which no
     * task key can.
     */
    public static String journalKey(Kind kind, String tenant, String key) {
        String scoped = tenant == null ? key : tenant + '\u0001' + key;
        return kind == Kind.TASKS
                ? scoped
                : "\u0002" + kind.tag + '\u0002' + (tenant == null ? "" : tenant) + '\u0001' + key;
    }

    /**
     * Whether {@code refusal} is one a request may have got only because its twin (the same key,
     * admitted meanwhile) took the room first: then the twin's answer is the request's.
     */
    static boolean forRoom(Throwable refusal) {
        return refusal instanceof QueueFullException
                || refusal instanceof TenantLimitException
                || refusal instanceof DeadlineUnmeetableException
                || refusal instanceof TooManyBlockedException;
    }

    /**
     * {@code admitted}, or, when it was refused for room, the answer {@code twin} finds stored under
     * the key (null: none, and the refusal stands).
     */
    public static <T> Future<T> orTwin(Future<T> admitted, Supplier<Future<T>> twin) {
        return admitted.recover(e -> forRoom(e)
                ? twin.get().compose(answer -> answer == null ? Future.failedFuture(e) : Future.succeededFuture(answer))
                : Future.failedFuture(e));
    }
}
