package dev.taskline.worker;

import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalSteps;
import dev.taskline.metrics.StepMeters;
import dev.taskline.model.Lease;
import dev.taskline.model.StepWritten;
import dev.taskline.model.TaskState;
import dev.taskline.model.Wait;
import dev.taskline.model.Waking;
import io.vertx.core.Future;
import java.time.Instant;
import java.util.List;

/**
 * Ends attempts suspended, for local and remote workers alike: opens the wait (its step and
 * deadline, fenced), ends the attempt pending, due when the wait ends, and tells the waker when.
 * A task whose signal or event is already there is due at once, for the caller to hold. A signal
 * that came while the end was being written (and so only buffered) wakes it right after.
 */
public final class Suspensions {

    /** The wake time of a wait with no timeout: far enough never to come. */
    static final Instant FOREVER = Instant.parse("9999-01-01T00:00:00Z");

    private final Journal journal;
    private final JournalSteps steps;
    private final Waking waking;
    private final StepMeters meters;

    /**
     * @param waking told of each suspended task's wake time (the waker arms its timer), and given a
     *               task a signal woke right after its suspend, to be held by its queue here
     */
    public Suspensions(Journal journal, JournalSteps steps, Waking waking, StepMeters meters) {
        this.meters = meters;
        this.journal = journal;
        this.steps = steps;
        this.waking = waking;
    }

    public JournalSteps steps() {
        return steps;
    }

    /** Journals a step an attempt ran, fenced by its lease: the result kept (null: the lease was lost). */
    public Future<StepWritten> step(Lease lease, String name, String resultJson) {
        return steps.step(lease, name, resultJson).map(kept -> {
            if (kept != null && kept.first()) {
                meters.completed();
            }
            return kept;
        });
    }

    /**
     * Ends {@code lease}'s attempt suspended on {@code wait}: the task's state after it (cancelled
     * when someone had asked), and whether it is due again at once (what it waits for was there).
     */
    Future<Written> suspend(Lease lease, Wait wait) {
        return steps.open(lease, wait).compose(opened -> {
            if (opened == null) {
                return Future.succeededFuture(new Written(null, false));
            }
            Instant due = opened.ready() ? steps.clock().instant() : opened.until() == null ? FOREVER : opened.until();
            return journal.suspendUntil(lease, due).map(state -> {
                if (state == TaskState.PENDING && !opened.ready()) {
                    meters.suspended(wait.kind().wire());
                    waking.wakeAt(due);
                    if (wait.kind() != Wait.Kind.SLEEP) {
                        steps.recheck(lease.taskId()).onSuccess(task -> {
                            if (task != null) {
                                waking.hold(List.of(task));
                            }
                        });
                    }
                }
                return new Written(state, opened.ready());
            });
        });
    }
}
