package dev.taskline.journal;

import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.function.Function;

/** Instants as the journal's timestamptz parameters take them. */
final class Times {

    private Times() {}

    static OffsetDateTime utc(Instant instant) {
        return OffsetDateTime.ofInstant(instant, ZoneOffset.UTC);
    }

    /**
     * The last conversion made for one column of a grouped statement: a group's rows mostly share
     * their times (one clock reading, one lease length per queue), so most rows reuse it.
     */
    static final class Memo<K, V> {
        private final Function<K, V> convert;
        private K key;
        private V value;

        Memo(Function<K, V> convert) {
            this.convert = convert;
        }

        V get(K next) {
            if (!next.equals(key)) {
                value = convert.apply(next);
                key = next;
            }
            return value;
        }
    }
}
