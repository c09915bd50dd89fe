package dev.taskline.model.problem;

/**
 * The journal did not answer: the database is down, unreachable, shutting down, out of
 * connections or refusing our role. The request was not carried out as far as the node knows (a
 * statement cut off in flight may still have committed; an Idempotency-Key makes the retry safe),
 * and trying again later may work. Any other failure of a journal call is a fault of the request
 * or of ours, and stays what it was.
 */
public final class JournalUnavailableException extends ProblemException {

    /** How long a client should wait when the journal does not answer. */
    private static final long RETRY_AFTER_SECONDS = 2;

    public JournalUnavailableException(Throwable cause) {
        super(
                503,
                "journal-unavailable",
                "Journal unavailable",
                "the journal did not answer: " + cause.getMessage(),
                cause);
    }

    @Override
    public String detail() {
        return "the journal did not answer; nothing was changed";
    }

    @Override
    public Long retryAfterSeconds() {
        return RETRY_AFTER_SECONDS;
    }
}
