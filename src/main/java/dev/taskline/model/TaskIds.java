package dev.taskline.model;

import java.nio.ByteBuffer;
import java.security.SecureRandom;
import java.time.Clock;
import java.time.Instant;
import java.util.UUID;

/**
 * UUIDv7 task ids (RFC 9562): the first 48 bits are the creation time in milliseconds, so ids sort
 * by age, which gives keyset pagination and index locality for free.
 *
 * <p>Within one millisecond the 12-bit {@code rand_a} field is a counter (the RFC's "method 1"), so
 * ids made by one node are strictly increasing even when the clock stands still, as an injected
 * test clock does. When the counter runs out, the timestamp moves one millisecond ahead.
 */
public final class TaskIds {

    private static final SecureRandom RANDOM = new SecureRandom();
    /**
     * Random bits drawn a page at a time: one SecureRandom call per task id was a lock, a read of the
     * kernel's pool and a hash per id, for 62 bits.
     */
    private static final ByteBuffer BITS = ByteBuffer.allocate(4096).position(4096);

    private static final int COUNTER_LIMIT = 1 << 12;
    private static long lastMillis;
    private static int counter;

    private TaskIds() {}

    /**
     * Orders ids as PostgreSQL orders uuid values (byte by byte, unsigned), which for UUIDv7 is
     * creation order. {@link UUID#compareTo} compares signed halves and may disagree.
     */
    public static int compare(UUID a, UUID b) {
        int high = Long.compareUnsigned(a.getMostSignificantBits(), b.getMostSignificantBits());
        return high != 0 ? high : Long.compareUnsigned(a.getLeastSignificantBits(), b.getLeastSignificantBits());
    }

    /** The least id any task created at {@code instant}'s millisecond can have: every older one sorts below it. */
    public static UUID least(Instant instant) {
        return new UUID((instant.toEpochMilli() << 16) | (0x7L << 12), 0x8000000000000000L);
    }

    public static UUID next(Clock clock) {
        long millis;
        int sequence;
        long random;
        synchronized (TaskIds.class) {
            millis = Math.max(clock.millis(), lastMillis);
            if (millis == lastMillis) {
                counter++;
                if (counter == COUNTER_LIMIT) {
                    millis++;
                    counter = 0;
                }
            } else {
                counter = 0;
            }
            lastMillis = millis;
            sequence = counter;
            if (!BITS.hasRemaining()) {
                RANDOM.nextBytes(BITS.array());
                BITS.clear();
            }
            random = BITS.getLong();
        }
        long msb = (millis << 16) | (0x7L << 12) | sequence;
        long lsb = (random & 0x3FFFFFFFFFFFFFFFL) | 0x8000000000000000L;
        return new UUID(msb, lsb);
    }
}
