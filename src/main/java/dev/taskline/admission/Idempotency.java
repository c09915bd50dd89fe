package dev.taskline.admission;

import dev.taskline.model.problem.DeadlineUnmeetableException;
import dev.taskline.model.problem.IdempotencyConflictException;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.QueueFullException;
import dev.taskline.model.problem.TenantLimitException;
import dev.taskline.model.problem.TooManyBlockedException;
import io.vertx.core.Future;
import java.time.Duration;
import java.util.function.Function;
import java.util.function.Supplier;

/**
 * The one place that says what an Idempotency-Key is, where it lives in the journal, and what a
 * request under one gets, for every door that takes one: tasks and batches, flows, the tasks an
 * event's triggers start; signals check their key here too (they keep it on their task, and events
 * their id per tenant, each in its own table, where a repeat is the same signal or event).
 *
 * <p>A request under a key ({@link Keyed}) gets, in this order: the answer stored under the key,
 * when its first request was this one (a different one: 409); else its own answer, written with
 * the key in one transaction; and when a twin took the key meanwhile, the twin's answer as above,
 * even when this request was refused for room the twin took. Each kind of request and each tenant
 * has a namespace of its own that no key and no tenant name can reach into: a tenant name has no
 * control character, and neither has a key (refused, 422), so the separators below cannot be
 * forged.
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

    private final Duration keepFor;

    /** @param keepFor how long a key answers with its first request's answer */
    public Idempotency(Duration keepFor) {
        this.keepFor = keepFor;
    }

    /**
     * A request under a key: the key as its caller gave it (named in a 409), where it lives in the
     * journal, the request's fingerprint, and how long the journal keeps the key.
     */
    public record Keyed(String key, String journalKey, String requestHash, Duration keepFor) {

        /**
         * The answer: {@code find} reads what the journal keeps under the key (null: nothing live);
         * only when it keeps nothing does {@code proceed} admit the request, writing it under the key
         * and answering {@link #replay} with what it found there when it lost the key to a twin.
         */
        public <A> Future<A> answer(Function<String, Future<Earlier<A>>> find, Supplier<Future<A>> proceed) {
            // A replay answers even when there is no room now: the work it names was accepted long ago.
            return find.apply(journalKey)
                    .compose(earlier -> earlier != null
                            ? Future.succeededFuture(replay(earlier))
                            : orTwin(
                                    proceed.get(),
                                    () -> find.apply(journalKey).map(twin -> twin == null ? null : replay(twin))));
        }

        /**
         * {@code earlier}'s answer, when its request was this one.
         *
         * @param earlier what the key's first request left; null when its row is gone (expired
         *     since), which matches no request
         * @throws IdempotencyConflictException when it was another request
         */
        public <A> A replay(Earlier<A> earlier) {
            if (earlier == null
                    || earlier.requestHash() == null
                    || !earlier.requestHash().equals(requestHash)) {
                throw new IdempotencyConflictException(key);
            }
            return earlier.answer();
        }
    }

    /**
     * What a key's first request left in the journal: its fingerprint (null: it matches no request)
     * and its answer, as a replay shows it.
     */
    public record Earlier<A>(String requestHash, A answer) {}

    /**
     * A request of {@code kind} from {@code tenant} (null: none) under {@code key}, which is not null.
     * Its fingerprint covers {@code what} it is ("task", "batch", "flow"), the tenant (the same key
     * from another tenant is another request) and {@code canonicalJson}, the request with its keys
     * sorted.
     */
    public Keyed keyed(Kind kind, String tenant, String key, String what, String canonicalJson) {
        String hash = Canonical.sha256(what + ":" + (tenant == null ? "" : "tenant=" + tenant + ":") + canonicalJson);
        return new Keyed(key, journalKey(kind, tenant, key), hash, keepFor);
    }

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
