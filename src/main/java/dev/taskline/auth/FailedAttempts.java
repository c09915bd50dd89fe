package dev.taskline.auth;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;

/**
 * Failed authentications per client address in the current minute, so that a client past the
 * bound is answered 429 before its key is even looked at: guessing a key at line rate is not
 * possible. The window is fixed (a minute from the first failure), which is enough to bound a
 * guesser; addresses are forgotten when their minute is over, and at most {@link #MAX_ADDRESSES}
 * are kept (a flood of new addresses clears the table rather than growing it). Thread-safe: the
 * HTTP instances of a node share one, so that more event loops do not mean more guesses.
 */
public final class FailedAttempts {

    static final int MAX_ADDRESSES = 100_000;
    private static final long WINDOW_MS = 60_000;

    private final int maxPerMinute;
    private final Clock clock;
    private final Map<String, long[]> byAddress = new HashMap<>();

    public FailedAttempts(int maxPerMinute, Clock clock) {
        this.maxPerMinute = maxPerMinute;
        this.clock = clock;
    }

    /** Seconds until {@code address} may try again, or 0 when it may now. */
    public synchronized long blockedForSeconds(String address) {
        long[] window = byAddress.get(address);
        long now = clock.millis();
        if (window == null || now - window[0] >= WINDOW_MS) {
            return 0;
        }
        return window[1] >= maxPerMinute ? Math.max(1, (window[0] + WINDOW_MS - now + 999) / 1000) : 0;
    }

    /** Counts a failed attempt of {@code address}. */
    public synchronized void failed(String address) {
        long now = clock.millis();
        long[] window = byAddress.get(address);
        if (window == null || now - window[0] >= WINDOW_MS) {
            if (byAddress.size() >= MAX_ADDRESSES) {
                byAddress.values().removeIf(w -> now - w[0] >= WINDOW_MS);
                if (byAddress.size() >= MAX_ADDRESSES) {
                    byAddress.clear();
                }
            }
            byAddress.put(address, new long[] {now, 1});
        } else {
            window[1]++;
        }
    }
}
