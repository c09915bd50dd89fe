package dev.taskline.support;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.time.Instant;
import java.time.ZoneOffset;
import java.time.format.DateTimeFormatter;
import java.util.SplittableRandom;
import org.junit.jupiter.api.Test;

class IsoTimeTest {

    private static final DateTimeFormatter MICROS =
            DateTimeFormatter.ofPattern("uuuu-MM-dd'T'HH:mm:ss.SSSSSS'Z'").withZone(ZoneOffset.UTC);

    @Test
    void formatsAsInstantToStringDoes() {
        SplittableRandom random = new SplittableRandom(7);
        long max = Instant.parse("9999-12-31T23:59:59Z").getEpochSecond();
        for (int i = 0; i < 100_000; i++) {
            long second = random.nextLong(Instant.parse("0000-01-01T00:00:00Z").getEpochSecond(), max + 1);
            int nanos = switch (i % 4) {
                case 0 -> 0;
                case 1 -> random.nextInt(1000) * 1_000_000;
                case 2 -> random.nextInt(1_000_000) * 1_000;
                default -> random.nextInt(1_000_000_000);
            };
            Instant instant = Instant.ofEpochSecond(second, nanos);
            assertEquals(instant.toString(), IsoTime.format(instant));
            assertEquals(MICROS.format(instant), IsoTime.micros(instant));
        }
    }

    @Test
    void keepsTheSameSecondApartFromItsFraction() {
        Instant second = Instant.parse("2026-12-01T09:00:00Z");
        assertEquals("2026-12-01T09:00:00Z", IsoTime.format(second));
        assertEquals("2026-12-01T09:00:00.001Z", IsoTime.format(second.plusMillis(1)));
        assertEquals("2026-12-01T09:00:00.000001Z", IsoTime.format(second.plusNanos(1_000)));
        assertEquals("2026-12-01T09:00:00.000000001Z", IsoTime.format(second.plusNanos(1)));
        assertEquals("2026-12-01T09:00:00.000000Z", IsoTime.micros(second));
        assertEquals("2026-12-01T09:00:00.000999Z", IsoTime.micros(second.plusNanos(999_999)));
        assertEquals("2026-12-01T09:00:01Z", IsoTime.format(second.plusSeconds(1)));
    }

    @Test
    void formatsTheFirstAndLastSecondsOfFourDigitYears() {
        for (String text : new String[] {
            "0000-01-01T00:00:00Z",
            "0000-01-01T00:00:00.000000001Z",
            "9999-12-31T23:59:59Z",
            "9999-12-31T23:59:59.999999999Z",
            "1969-12-31T23:59:59.5Z",
            "1970-01-01T00:00:00Z"
        }) {
            Instant instant = Instant.parse(text);
            assertEquals(instant.toString(), IsoTime.format(instant));
            assertEquals(MICROS.format(instant), IsoTime.micros(instant));
        }
    }

    @Test
    void fallsBackOutsideFourDigitYears() {
        for (Instant instant : new Instant[] {
            Instant.parse("+10000-01-01T00:00:00.5Z"), Instant.parse("-0001-12-31T23:59:59Z"), Instant.MIN, Instant.MAX
        }) {
            assertEquals(instant.toString(), IsoTime.format(instant));
        }
        Instant far = Instant.parse("+10000-01-01T00:00:00.123456789Z");
        assertEquals(MICROS.format(far), IsoTime.micros(far));
    }
}
