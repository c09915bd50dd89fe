package dev.taskline.worker;

/**
 * Retry delays: exponential with full jitter. The ceiling doubles with each failed attempt up to
 * the cap, and the delay is drawn uniformly below it, so that tasks failing together do not come
 * back together.
 */
public final class Backoff {

    private Backoff() {}

    /**
     * @param failedAttempt the attempt that just failed, from 1
     * @param jitter        a draw from [0, 1]
     */
    public static long delayMs(int failedAttempt, long baseMs, long capMs, double jitter) {
        return Math.round(ceilingMs(failedAttempt, baseMs, capMs) * Math.max(0, Math.min(1, jitter)));
    }

    /** The most the delay after {@code failedAttempt} can be. */
    public static long ceilingMs(int failedAttempt, long baseMs, long capMs) {
        int doublings = Math.max(0, Math.min(62, failedAttempt - 1));
        if (baseMs > 0 && doublings >= Long.numberOfLeadingZeros(baseMs) - 1) {
            return capMs; // baseMs << doublings would overflow; it is past any cap anyway
        }
        return Math.min(capMs, baseMs << doublings);
    }
}
