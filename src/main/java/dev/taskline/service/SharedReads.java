package dev.taskline.service;

import io.vertx.core.Future;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.Map;
import java.util.concurrent.ConcurrentHashMap;
import java.util.function.Function;

/**
 * A read whose cost grows with what one caller owns (a tenant's counts over all its tasks), made at
 * most once per {@code fresh} per key on this node (zero: one in flight at a time), however many ask:
 * callers within that time, or while it is in flight, share its answer. A tenant polling its queues
 * from a thousand tabs costs the journal what one tab would. A failed read is not kept.
 */
final class SharedReads<K, V> {

    /** Past this many keys, those whose answer has gone stale are dropped at the next read. */
    private static final int SWEEP_PAST = 256;

    private record Entry<V>(Instant readAt, Future<V> answer) {}

    private final Function<K, Future<V>> read;
    private final Duration fresh;
    private final Clock clock;
    private final Map<K, Entry<V>> entries = new ConcurrentHashMap<>();

    SharedReads(Function<K, Future<V>> read, Duration fresh, Clock clock) {
        this.read = read;
        this.fresh = fresh;
        this.clock = clock;
    }

    Future<V> get(K key) {
        Instant now = clock.instant();
        if (entries.size() > SWEEP_PAST) {
            entries.values().removeIf(entry -> stale(entry, now));
        }
        return entries.compute(
                        key, (k, entry) -> entry == null || stale(entry, now) ? new Entry<>(now, read.apply(k)) : entry)
                .answer();
    }

    private boolean stale(Entry<V> entry, Instant now) {
        return entry.answer().failed()
                || (entry.answer().isComplete() && !entry.readAt().plus(fresh).isAfter(now));
    }

    /** How many keys are held: what the sweep keeps near the number of callers of the last moment. */
    int held() {
        return entries.size();
    }
}
