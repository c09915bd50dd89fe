package dev.taskline.journal;

/**
 * How long the node's own statements may run, and wait for a lock, before PostgreSQL cancels them
 * (0: no bound). A cancelled statement fails its request with 503 and gives its connection back,
 * where without a bound a lock held elsewhere would hold the request, and the connection, for as
 * long as it is held.
 */
public record StatementTimeouts(long statementMs, long lockMs) {

    /** None: for tests that build a pool of their own. */
    public static final StatementTimeouts NONE = new StatementTimeouts(0, 0);
}
