package dev.taskline.admission;

/** An Idempotency-Key reused with a different request; nothing was journaled. */
public class IdempotencyConflictException extends RuntimeException {
    public IdempotencyConflictException(String key) {
        super("Idempotency-Key '" + key + "' was used before with a different request", null, false, false);
    }
}
