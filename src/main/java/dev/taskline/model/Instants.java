package dev.taskline.model;

import dev.taskline.model.problem.InvalidTaskException;
import java.time.DateTimeException;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;

/**
 * The one rule for an instant that comes from outside (a request's {@code runAt}, {@code startBy},
 * {@code suspend.until}; a push target's suspend; a handler's sleep or wait): it is read only from
 * {@link #EARLIEST} to {@link #LATEST}, and a time the node is asked to wait until is at most
 * {@link #MAX_AHEAD} after now. Past either, 422 (for a handler, an {@link
 * IllegalArgumentException}): PostgreSQL's timestamps end long before Java's instants do, and a
 * wait a year long is a design to be told, not a date to be stored.
 */
public final class Instants {

    public static final Instant EARLIEST = Instant.EPOCH;
    public static final Instant LATEST = Instant.parse("9999-12-31T23:59:59.999999Z");
    /** The longest wait: a delay, a deadline, a sleep, a wait's timeout. */
    public static final Duration MAX_AHEAD = Duration.ofDays(365);

    public static final long MAX_AHEAD_MS = MAX_AHEAD.toMillis();

    private Instants() {}

    /**
     * {@code value} read as an ISO-8601 instant (an offset other than Z is taken), within range.
     *
     * @param field what the error names ("runAt", "suspend.until")
     */
    public static Instant parse(Object value, String field) {
        Instant at = null;
        if (value instanceof String text) {
            try {
                at = OffsetDateTime.parse(text).toInstant();
            } catch (DateTimeException e) {
                at = instant(text);
            }
        }
        if (at == null) {
            throw new InvalidTaskException(field + " must be an ISO-8601 instant such as 2026-12-01T09:00:00Z");
        }
        return within(at, field);
    }

    /** As Instant reads it (the year 10⁹ too, which an offset date-time cannot hold), or null. */
    private static Instant instant(String text) {
        try {
            return Instant.parse(text);
        } catch (DateTimeException e) {
            return null;
        }
    }

    /** {@code at}, when it is from {@link #EARLIEST} to {@link #LATEST}; else 422 naming {@code field}. */
    public static Instant within(Instant at, String field) {
        String flaw = flaw(at, null);
        if (flaw != null) {
            throw new InvalidTaskException(field + " " + flaw);
        }
        return at;
    }

    /**
     * What is wrong with {@code at} as an instant from outside, or null: out of range, or (when
     * {@code now} is given) more than {@link #MAX_AHEAD} after it.
     */
    public static String flaw(Instant at, Instant now) {
        if (at.isBefore(EARLIEST)) {
            return "must be at least " + EARLIEST + ", got " + at;
        }
        if (at.isAfter(LATEST)) {
            return "must be at most 9999-12-31T23:59:59Z, got " + at;
        }
        if (now != null && at.isAfter(now.plus(MAX_AHEAD))) {
            return "must be at most a year (" + MAX_AHEAD.toDays() + " days) ahead, got " + at;
        }
        return null;
    }

    /** The instant {@code ms} after {@code now}, when that is at most {@link #MAX_AHEAD} ahead; else 422. */
    public static Instant after(Instant now, long ms, String field) {
        if (ms < 0 || ms > MAX_AHEAD_MS) {
            throw new InvalidTaskException(field + " must be from 0 to " + MAX_AHEAD_MS + " (a year)");
        }
        return now.plusMillis(ms);
    }
}
