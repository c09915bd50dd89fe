package dev.taskline.model.problem;

/** An Idempotency-Key reused with a different request; nothing was journaled. */
public final class IdempotencyConflictException extends ProblemException {
    public IdempotencyConflictException(String key) {
        super(
                409,
                "idempotency-key-reused",
                "Idempotency-Key reused",
                "Idempotency-Key '" + key + "' was used before with a different request");
    }
}
