package dev.taskline.metrics;

import java.time.Duration;

/**
 * The bucket bounds of the node's duration histograms. Micrometer's percentile histogram publishes
 * 70-odd buckets a timer, from 1 ms to 30 s: with three timers a queue, a node of ten queues wrote
 * 2,000 bucket lines of its 3,000 at every scrape, and a scrape took 15 to 45 ms (issue 45). Fixed
 * bounds, a few per decade, read as well on a dashboard and cost a third of that.
 */
final class Buckets {

    private Buckets() {}

    /** From a quarter of a millisecond to a minute: waits, hand-offs, journal round trips, submissions. */
    static final Duration[] LATENCY = millis(
            0.25, 0.5, 1, 2, 3, 5, 7.5, 10, 15, 25, 50, 75, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000);

    /** As {@link #LATENCY}, on to an hour: a task's run. */
    static final Duration[] RUN = millis(
            0.25, 0.5, 1, 2, 5, 10, 25, 50, 100, 250, 500, 1_000, 2_500, 5_000, 10_000, 30_000, 60_000, 300_000,
            900_000, 3_600_000);

    /** From ten microseconds: answers that take well under a millisecond (a refusal). */
    static final Duration[] FAST = millis(0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1, 2.5, 5, 10, 25, 50, 100, 1_000);

    private static Duration[] millis(double... bounds) {
        Duration[] durations = new Duration[bounds.length];
        for (int i = 0; i < bounds.length; i++) {
            durations[i] = Duration.ofNanos(Math.round(bounds[i] * 1_000_000));
        }
        return durations;
    }
}
