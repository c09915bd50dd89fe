package dev.taskline.auth;

import java.time.Clock;
import java.util.HashMap;
import java.util.Map;

/**
 * Failed authentications in the current minute, per what failed: a client address, a key presented
 * (by a digest of it). Past the bound, a failing request is answered 429 rather than 401, and is
 * counted on; a request whose credentials hold is never refused here, whatever others sharing its
 * address did (behind a proxy, every client may be one address). Keys are 32 random bytes, so this
 * sheds and flags guessing rather than makes it feasible or not. The window is fixed (a minute from
 * the first failure); what failed is forgotten when its minute is over, and at most {@link
 * #MAX_ADDRESSES} are kept (a flood of new ones clears the table rather than growing it).
 * Thread-safe: the HTTP instances of a node share one, so that more event loops do not mean more
 * guesses.
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

    /** Seconds until {@code address} (a client address, a key's digest) is below the bound again, or 0. */
    public synchronized long blockedForSeconds(String address) {
        long[] window = byAddress.get(address);
        long now = clock.millis();
        if (window == null || now - window[0] >= WINDOW_MS) {
            return 0;
        }
        return window[1] >= maxPerMinute ? Math.max(1, (window[0] + WINDOW_MS - now + 999) / 1000) : 0;
    }

    /** Counts a failed attempt of {@code address} (a client address, a key's digest). */
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
