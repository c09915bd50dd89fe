package dev.taskline.support;

import java.time.Instant;
import java.time.LocalDateTime;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;

/**
 * ISO-8601 text of instants on the hot path: every 202 carries each task's {@code runAt}, and the
 * {@code sleep} handler stamps its start. {@link Instant#toString()} goes through a general
 * formatter (a BigDecimal per fraction); over two 20,000-task drains of a fresh node, compiling it
 * took 13 % of the C2 compiler's time, more than any other package. Here the date and time of day
 * are formatted once per second per thread, and only the fraction is written per call.
 */
public final class IsoTime {

    /** Years 0 to 9999 print as four digits; others fall back to the JDK's formatter. */
    private static final long MIN_SECOND = LocalDateTime.of(0, 1, 1, 0, 0).toEpochSecond(ZoneOffset.UTC);

    private static final long MAX_SECOND =
            LocalDateTime.of(9999, 12, 31, 23, 59, 59).toEpochSecond(ZoneOffset.UTC);

    private static final DateTimeFormatter MICROS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    private static final ThreadLocal<Second> LAST = ThreadLocal.withInitial(Second::new);

    private IsoTime() {}

    /** Exactly {@link Instant#toString()}: the fraction in groups of three digits, as many as it needs. */
    public static String format(Instant instant) {
        int nanos = instant.getNano();
        int digits = nanos == 0 ? 0 : nanos % 1_000_000 == 0 ? 3 : nanos % 1_000 == 0 ? 6 : 9;
        return format(instant, digits);
    }

    /** Always six fraction digits (microseconds, truncated), so that texts sort as their instants do. */
    public static String micros(Instant instant) {
        return format(instant, 6);
    }

    private static String format(Instant instant, int digits) {
        long second = instant.getEpochSecond();
        if (second < MIN_SECOND || second > MAX_SECOND) {
            return digits == 6 ? MICROS.format(instant) : instant.toString();
        }
        String prefix = LAST.get().prefix(second);
        if (digits == 0) {
            return prefix + 'Z';
        }
        StringBuilder text =
                new StringBuilder(prefix.length() + digits + 2).append(prefix).append('.');
        int fraction = instant.getNano() / pow10(9 - digits);
        for (int place = pow10(digits - 1); place > 0; place /= 10) {
            text.append((char) ('0' + fraction / place % 10));
        }
        return text.append('Z').toString();
    }

    private static final int[] POWERS_OF_TEN = {
        1, 10, 100, 1_000, 10_000, 100_000, 1_000_000, 10_000_000, 100_000_000, 1_000_000_000
    };

    private static int pow10(int n) {
        return POWERS_OF_TEN[n];
    }

    /** The last second formatted on this thread: "2026-12-01T09:00:00". */
    private static final class Second {
        private long second = Long.MIN_VALUE;
        private String prefix;

        String prefix(long epochSecond) {
            if (epochSecond != second) {
                String text = LocalDateTime.ofEpochSecond(epochSecond, 0, ZoneOffset.UTC)
                        .toString();
                // LocalDateTime leaves ":00" seconds out; ISO_INSTANT always prints them.
                prefix = text.length() == 16 ? text + ":00" : text;
                second = epochSecond;
            }
            return prefix;
        }
    }
}
