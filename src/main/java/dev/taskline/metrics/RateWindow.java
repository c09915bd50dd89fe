package dev.taskline.metrics;

import java.time.Clock;

/**
 * Events per second over a sliding window of one-second buckets. Used to estimate how long a
 * backlog takes to drain; a ring of counters is enough and costs no allocation per event.
 */
public final class RateWindow {

    private final Clock clock;
    private final long[] counts;
    private final long[] seconds;

    public RateWindow(Clock clock, int windowSeconds) {
        this.clock = clock;
        this.counts = new long[windowSeconds];
        this.seconds = new long[windowSeconds];
    }

    public synchronized void record(long n) {
        long second = clock.millis() / 1000;
        int slot = (int) (second % counts.length);
        if (seconds[slot] != second) {
            seconds[slot] = second;
            counts[slot] = 0;
        }
        counts[slot] += n;
    }

    /** Average over the last full window, counting the current partial second as one. */
    public synchronized double perSecond() {
        long now = clock.millis() / 1000;
        long total = 0;
        for (int i = 0; i < counts.length; i++) {
            if (now - seconds[i] < counts.length) {
                total += counts[i];
            }
        }
        return (double) total / counts.length;
    }
}
