package dev.taskline.admission;

/**
 * How long a refused client should wait: the time the queue needs, at its recent completion rate,
 * to work off its backlog (a full capacity's worth when it refuses). Shorter hints would bring the
 * refused clients back while the queue is still full, all at once.
 */
public final class RetryAfter {

    static final long MIN_SECONDS = 1;
    static final long MAX_SECONDS = 300;
    /** With no completions in the window there is no rate to go by; a short probe interval is honest. */
    static final long UNKNOWN_RATE_SECONDS = 5;

    private RetryAfter() {}

    /**
     * @param backlog           tasks ahead of the refused ones
     * @param completionsPerSec how fast the queue has been finishing tasks lately
     */
    public static long seconds(long backlog, double completionsPerSec) {
        if (!(completionsPerSec > 0)) {
            return UNKNOWN_RATE_SECONDS;
        }
        double seconds = Math.ceil(Math.max(1, backlog) / completionsPerSec);
        return (long) Math.max(MIN_SECONDS, Math.min(MAX_SECONDS, seconds));
    }
}
