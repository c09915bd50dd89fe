package dev.taskline.model;

import java.util.Locale;

/**
 * The states of the task lifecycle, as stored. {@code EXPIRED}: the task had to start by a deadline
 * and had not by then; it never ran. {@code BLOCKED}: a task of a flow whose parents have not yet
 * done what its join waits for; it is in no queue.
 */
public enum TaskState {
    BLOCKED,
    PENDING,
    RUNNING,
    SUCCEEDED,
    FAILED,
    CANCELLED,
    EXPIRED;

    // Made once: every write and every task shown names its state.
    private final String sql = name().toLowerCase(Locale.ROOT);

    public String sql() {
        return sql;
    }

    public boolean terminal() {
        return this == SUCCEEDED || this == FAILED || this == CANCELLED || this == EXPIRED;
    }

    /** The state named {@code text}, or null when there is none. */
    public static TaskState parse(String text) {
        for (TaskState state : values()) {
            if (state.sql().equals(text)) {
                return state;
            }
        }
        return null;
    }
}
