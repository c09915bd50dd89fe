package dev.taskline.worker;

import dev.taskline.config.QueueConfig;
import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalFlows;
import dev.taskline.model.SpawnPlanner;
import java.time.Clock;
import java.util.function.DoubleSupplier;

/**
 * What every worker of this node, local or remote, runs and ends attempts with: built once by the
 * wiring, so that each worker is handed one thing rather than a dozen.
 */
public final class AttemptParts {

    final Journal journal;
    final JournalFlows flows;
    final Suspensions suspensions;
    final EndWriter ends;
    final ProgressListener progress;
    final Clock clock;
    /** Draws from [0, 1] for retry backoffs (fixed in tests, so that delays are exact). */
    final DoubleSupplier jitter;

    final AnswerBounds bounds;

    public AttemptParts(
            Journal journal,
            JournalFlows flows,
            SpawnPlanner spawns,
            Suspensions suspensions,
            ProgressListener progress,
            Clock clock,
            DoubleSupplier jitter,
            AnswerBounds bounds) {
        this.journal = journal;
        this.flows = flows;
        this.suspensions = suspensions;
        this.ends = new EndWriter(journal, flows, spawns, suspensions);
        this.progress = progress;
        this.clock = clock;
        this.jitter = jitter;
        this.bounds = bounds;
    }

    /** The deciding's policy for {@code queue}'s attempts. */
    Endings.Policy policy(QueueConfig queue) {
        return Endings.Policy.of(queue, bounds.maxResultBytes(), jitter);
    }
}
