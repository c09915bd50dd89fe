package dev.taskline.auth;

import java.time.Clock;
import java.util.Iterator;
import java.util.LinkedHashMap;
import java.util.Map;

/**
 * Failed authentications in the current minute, per one kind of what failed: client addresses, or
 * keys presented (by a digest of each); a node keeps one of each, so that a flood of made-up keys
 * cannot crowd out the count of an address. Past the bound, a failing request is answered 429
 * rather than 401, and is counted on; a request whose credentials hold is never refused here,
 * whatever others sharing its address did (behind a proxy, every client may be one address). This
 * sheds and flags guessing; a key's 32 random bytes are what make it hopeless. The window is fixed
 * (a minute from the first failure). At most {@link #MAX_ENTRIES} are kept: past it the oldest
 * window goes first, which is the first to be over anyway. Thread-safe: the HTTP instances of a
 * node share one, so that more event loops do not mean more guesses.
 */
public final class FailedAttempts {

    static final int MAX_ENTRIES = 100_000;
    private static final long WINDOW_MS = 60_000;

    private final int maxPerMinute;
    private final Clock clock;
    /** In the order the windows began: the eldest entry is the one to end first. */
    private final LinkedHashMap<String, long[]> windows = new LinkedHashMap<>();

    public FailedAttempts(int maxPerMinute, Clock clock) {
        this.maxPerMinute = maxPerMinute;
        this.clock = clock;
    }

    /** Seconds until {@code what} is below the bound again, or 0. */
    public synchronized long blockedForSeconds(String what) {
        long[] window = windows.get(what);
        long now = clock.millis();
        if (window == null || now - window[0] >= WINDOW_MS) {
            return 0;
        }
        return window[1] >= maxPerMinute ? Math.max(1, (window[0] + WINDOW_MS - now + 999) / 1000) : 0;
    }

    /** Counts a failed attempt of {@code what}. */
    public synchronized void failed(String what) {
        long now = clock.millis();
        long[] window = windows.get(what);
        if (window != null && now - window[0] < WINDOW_MS) {
            window[1]++;
            return;
        }
        windows.remove(what); // a new window goes to the end of the order
        Iterator<Map.Entry<String, long[]>> eldest = windows.entrySet().iterator();
        while (eldest.hasNext()) {
            long[] next = eldest.next().getValue();
            if (now - next[0] < WINDOW_MS && windows.size() < MAX_ENTRIES) {
                break;
            }
            eldest.remove();
        }
        windows.put(what, new long[] {now, 1});
    }

    synchronized int size() {
        return windows.size();
    }
}
