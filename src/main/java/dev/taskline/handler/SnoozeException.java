package dev.taskline.handler;

import java.time.Duration;

/**
 * Not a failure: the handler asks to run again after {@code delay} (a rate limit, a resource not
 * ready yet). The attempt is not counted against the task's attempts.
 */
public class SnoozeException extends RuntimeException {

    private final Duration delay;

    public SnoozeException(Duration delay) {
        super("snoozed for " + delay.toMillis() + " ms", null, false, false);
        if (delay.isNegative()) {
            throw new IllegalArgumentException("a snooze cannot be negative");
        }
        this.delay = delay;
    }

    public Duration delay() {
        return delay;
    }
}
