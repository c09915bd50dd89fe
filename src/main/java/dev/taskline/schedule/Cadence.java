package dev.taskline.schedule;

import com.cronutils.model.Cron;
import com.cronutils.model.CronType;
import com.cronutils.model.definition.CronDefinitionBuilder;
import com.cronutils.model.time.ExecutionTime;
import com.cronutils.parser.CronParser;
import java.time.Duration;
import java.time.Instant;
import java.time.ZoneId;
import java.time.ZonedDateTime;

/**
 * When a schedule's ticks fall: a cron expression in a time zone, or a fixed interval. Both answer
 * in instants, so that every node, whatever its own zone, names a tick by the same instant (the
 * journal's key for it).
 */
public sealed interface Cadence permits Cadence.CronCadence, Cadence.Every {

    /** The first tick strictly after {@code after}; null when there is none (a cron that never fires again). */
    Instant next(Instant after);

    /** The last tick strictly before {@code before}; null when there is none. */
    Instant previous(Instant before);

    /**
     * Cron, as cron-utils defines it: 5 fields as Unix cron (minute hour day-of-month month
     * day-of-week), or 6 with seconds first as Spring's (which also takes {@code ?}, {@code L},
     * {@code W} and {@code #}). Daylight-saving changes follow cron-utils: see {@code CadenceTest}.
     */
    final class CronCadence implements Cadence {
        private static final CronParser UNIX =
                new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.UNIX));
        private static final CronParser WITH_SECONDS =
                new CronParser(CronDefinitionBuilder.instanceDefinitionFor(CronType.SPRING53));

        private final ExecutionTime times;
        private final ZoneId zone;

        /** @throws IllegalArgumentException with cron-utils' reason, for an expression it cannot read */
        CronCadence(String expression, ZoneId zone) {
            String[] fields = expression.trim().split("\\s+");
            if (fields.length != 5 && fields.length != 6) {
                throw new IllegalArgumentException("a cron expression has 5 fields (minute hour day-of-month month"
                        + " day-of-week), or 6 with seconds first; this one has " + fields.length);
            }
            Cron cron = (fields.length == 5 ? UNIX : WITH_SECONDS).parse(expression.trim());
            cron.validate();
            this.times = ExecutionTime.forCron(cron);
            this.zone = zone;
        }

        @Override
        public Instant next(Instant after) {
            return times.nextExecution(ZonedDateTime.ofInstant(after, zone))
                    .map(ZonedDateTime::toInstant)
                    .orElse(null);
        }

        /**
         * The tick {@link #next} would give last before {@code before}. cron-utils' own lastExecution
         * disagrees with its nextExecution on a fall-back day (it names the repeated 01:30 of
         * "30 1 * * *", which nextExecution skips), so it only finds a start two of its ticks back,
         * from which {@code next} walks forward: the ticks are those of {@code next}, in both directions.
         */
        @Override
        public Instant previous(Instant before) {
            Instant last = lastExecution(before);
            if (last == null) {
                return null;
            }
            Instant anchor = lastExecution(last);
            Instant found = null;
            for (Instant t = next(anchor == null ? last.minusNanos(1) : anchor);
                    t != null && t.isBefore(before);
                    t = next(t)) {
                found = t;
            }
            return found != null ? found : anchor;
        }

        private Instant lastExecution(Instant before) {
            return times.lastExecution(ZonedDateTime.ofInstant(before, zone))
                    .map(ZonedDateTime::toInstant)
                    .orElse(null);
        }
    }

    /**
     * Every {@code period}, on its multiples since the Unix epoch: PT1S on whole seconds, PT1H on
     * whole hours (UTC), whichever node computes them and whenever the schedule was made.
     */
    record Every(Duration period) implements Cadence {

        @Override
        public Instant next(Instant after) {
            long p = period.toMillis();
            return Instant.ofEpochMilli(Math.floorDiv(after.toEpochMilli(), p) * p + p);
        }

        @Override
        public Instant previous(Instant before) {
            long p = period.toMillis();
            long ms = before.toEpochMilli();
            long floor = Math.floorDiv(ms, p) * p;
            // "strictly before": a tick at a sub-millisecond before counts as before
            return Instant.ofEpochMilli(floor < ms || before.getNano() % 1_000_000 != 0 ? floor : floor - p);
        }
    }
}
