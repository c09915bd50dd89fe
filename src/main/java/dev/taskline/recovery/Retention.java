package dev.taskline.recovery;

import dev.taskline.config.TasklineConfig;
import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalUnits;
import io.vertx.core.Future;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;

/**
 * What retention keeps of finished work. Finished tasks live in units of the journal (one per
 * {@code retention.partitionIntervalMs}, migration 000030); a unit goes whole once everything in it
 * ended {@code retention.finishedTaskTtlMs} ago, so that no finished row is deleted one by one. Rows
 * no unit holds (the previous layout's, written before an upgrade, and those whose ids no unit
 * covered) go a batch at a time, as before units. Units are made ahead of the clock: a node makes
 * them when it starts (its clock decides the ids it hands out), the upkeep's holder at every pass.
 */
public final class Retention {

    /** Units tried at one pass: a journal that was stopped for a while catches up over a few. */
    private static final int UNITS_PER_PASS = 16;

    private final JournalUnits units;
    private final Journal journal;
    private final Clock clock;
    private final TasklineConfig.Retention config;
    private final int batchSize;

    public Retention(JournalUnits units, Journal journal, Clock clock, TasklineConfig.Retention config, int batchSize) {
        this.units = units;
        this.journal = journal;
        this.clock = clock;
        this.config = config;
        this.batchSize = batchSize;
    }

    /** What one pass did: units made and dropped, rows of dropped units' other tables, rows deleted one by one. */
    public record Pass(int made, int dropped, int leftovers, int deleted) {}

    /** Makes the units from one interval back to {@link TasklineConfig.Retention#UNITS_AHEAD} ahead of the clock. */
    public Future<Integer> makeAhead() {
        Duration every = Duration.ofMillis(config.partitionIntervalMs());
        Instant now = clock.instant();
        return units.make(now.minus(every), now.plus(every.multipliedBy(TasklineConfig.Retention.UNITS_AHEAD)), every);
    }

    /** One pass of the upkeep's holder. Not re-entrant: the caller waits for one pass before the next. */
    public Future<Pass> runOnce() {
        Instant cutoff = clock.instant().minusMillis(config.finishedTaskTtlMs());
        return makeAhead()
                .compose(made -> units.dropDue(cutoff, config.archive(), UNITS_PER_PASS)
                        .compose(dropped -> units.cleanDropped(cutoff, batchSize, UNITS_PER_PASS)
                                .compose(leftovers -> journal.deleteOld(
                                                Duration.ofMillis(config.finishedTaskTtlMs()), batchSize)
                                        .map(deleted -> new Pass(made, dropped, leftovers, deleted)))));
    }
}
