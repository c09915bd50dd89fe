package dev.taskline.model.problem;

import io.vertx.core.json.JsonObject;

/**
 * A failure a caller can act on, carrying its own problem (RFC 9457): the HTTP status it is
 * answered with, its type (the last part of {@code urn:taskline:problem:<type>}), a title, and the
 * message as the detail. The HTTP layer renders it and decides nothing; whatever is not one of
 * these is a fault of ours (500).
 *
 * <p>Sealed, so that every problem the API can answer is one of the classes below. Java lets a
 * sealed class outside a named module permit subclasses of its own package only, which is why
 * the problems of every part live here, beside their base, rather than in the parts that throw
 * them.
 */
public abstract sealed class ProblemException extends RuntimeException
        permits ApiException,
                DeadlineUnmeetableException,
                ForbiddenException,
                IdempotencyConflictException,
                InvalidLeaseTokenException,
                InvalidScheduleException,
                InvalidTaskException,
                JournalBusyException,
                JournalUnavailableException,
                KeyConflictException,
                KeyRefusedException,
                LeaseLostException,
                NotFoundException,
                QueueFullException,
                ScheduleExistsException,
                ShareExceededException,
                ShuttingDownException,
                TaskStateConflictException,
                TenantLimitException,
                TooManyClaimsException,
                TooManyBlockedException,
                TooManyStreamsException {

    private final int status;
    private final String type;
    private final String title;

    /** A problem whose detail is {@code message}; no stack trace (these are answers, not faults). */
    ProblemException(int status, String type, String title, String message) {
        this(status, type, title, message, null);
    }

    /** As above, keeping the failure underneath for the log. */
    ProblemException(int status, String type, String title, String message, Throwable cause) {
        super(message, cause, false, false);
        this.status = status;
        this.type = type;
        this.title = title;
    }

    public final int status() {
        return status;
    }

    public final String type() {
        return type;
    }

    public final String title() {
        return title;
    }

    /** The problem's detail, for the caller to read: its message, unless the problem says less. */
    public String detail() {
        return getMessage();
    }

    /** Members of the problem beyond type, title, status and detail; null for none. */
    public JsonObject extensions() {
        return null;
    }

    /** How long the caller should wait before trying again (the {@code Retry-After} header); null: no header. */
    public Long retryAfterSeconds() {
        return null;
    }

    /**
     * Whether this refuses work the node has not taken (a full queue, a tenant's limit, a busy
     * journal, a deadline it cannot meet): what the submission latency counts as refused.
     */
    public boolean refusesWork() {
        return false;
    }
}
