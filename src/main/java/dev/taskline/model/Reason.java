package dev.taskline.model;

import java.util.Locale;

/**
 * Why a task moved from one state to another, as its history and streams show it. Statements
 * whose reason is the caller's choice (an attempt's end) take it as a parameter; the others write
 * their one reason as a literal, and {@code ReasonTest} holds the two lists equal.
 */
public enum Reason {
    SUBMITTED,
    CLAIMED,
    SUCCEEDED,
    FAILED,
    FAILED_PERMANENTLY,
    CANCEL_REQUESTED,
    CANCELLED,
    RETRY_SCHEDULED,
    SNOOZED,
    RELEASED,
    LEASE_EXPIRED,
    RETRIED,
    EXPIRED,
    /** A flow task's parents did what its join waits for: blocked to pending. */
    UNBLOCKED,
    /** A flow task's join can no longer be met (a parent failed, or all did): blocked to cancelled. */
    PARENT_FAILED,
    /** A durable step's result was journaled (the task stays running). */
    STEP_COMPLETED,
    /** The handler slept or waited: back to pending until its wait ends, no attempt spent. */
    SUSPENDED,
    /** A suspended task's wait ended (its time, its signal or event, a compensating cancel): due now. */
    RESUMED,
    /** A cancel asked a task to undo what it did: it runs again with cancelled() true. */
    COMPENSATE_REQUESTED;

    // Made once: every attempt's end and every event shown names its reason.
    private final String sql = name().toLowerCase(Locale.ROOT);

    public String sql() {
        return sql;
    }

    /** The reason stored as {@code text}, or null when there is none by that name. */
    public static Reason parse(String text) {
        for (Reason reason : values()) {
            if (reason.sql().equals(text)) {
                return reason;
            }
        }
        return null;
    }
}
