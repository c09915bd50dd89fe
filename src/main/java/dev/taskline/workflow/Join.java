package dev.taskline.workflow;

/**
 * What a task of a flow waits for among its parents before it may run: {@code ALL} every parent
 * succeeded, {@code SETTLED} every parent ended whatever its outcome, {@code ANY} one parent
 * succeeded. A root (no parent) has nothing to wait for whatever its join.
 */
public enum Join {
    ALL("all"),
    SETTLED("settled"),
    ANY("any");

    private final String sql;

    Join(String sql) {
        this.sql = sql;
    }

    /** The name the API and the journal use, so neither depends on the enum's constant names. */
    public String sql() {
        return sql;
    }

    /** The join named {@code text} as {@link #sql()} spells it, or null for any other text. */
    public static Join parse(String text) {
        for (Join join : values()) {
            if (join.sql.equals(text)) {
                return join;
            }
        }
        return null;
    }
}
