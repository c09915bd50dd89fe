package dev.taskline.worker;

import dev.taskline.journal.Journal;
import dev.taskline.journal.JournalFlows;
import dev.taskline.model.Lease;
import dev.taskline.model.SpawnPlanner;
import dev.taskline.model.Task;
import dev.taskline.model.TaskState;
import io.vertx.core.Future;

/**
 * Writes an attempt's {@link End} through the journal's verbs, each fenced by the attempt's lease:
 * the one writer for attempts run here, pushed, or run by remote workers. It decides nothing; what
 * became of the task comes back for the caller's own bookkeeping.
 */
final class EndWriter {

    private final Journal journal;
    private final JournalFlows flows;
    private final SpawnPlanner spawns;
    private final Suspensions suspensions;

    EndWriter(Journal journal, JournalFlows flows, SpawnPlanner spawns, Suspensions suspensions) {
        this.journal = journal;
        this.flows = flows;
        this.spawns = spawns;
        this.suspensions = suspensions;
    }

    /**
     * Writes {@code end} for {@code lease}'s attempt. {@code spawner} is the task when the caller has
     * it (read from the journal otherwise, for what it spawns). A spawn the flows part refuses fails
     * the returned future with its reason, and nothing is written.
     */
    Future<Written> write(Lease lease, Task spawner, End end) {
        if (end instanceof End.Succeeded s && s.spawns()) {
            return succeedSpawning(lease, spawner, s);
        }
        if (end instanceof End.Succeeded s) {
            return (s.cancelWins() ? journal.succeedOrCancelled(lease, s.result()) : journal.succeed(lease, s.result()))
                    .map(Written::of);
        }
        if (end instanceof End.RetryAt r) {
            return journal.retryAt(lease, r.due(), r.error()).map(Written::of);
        }
        if (end instanceof End.Failed f) {
            return (f.cancelWins()
                            ? journal.failOrCancelled(lease, f.error(), f.permanent())
                            : journal.fail(lease, f.error(), f.permanent()))
                    .map(Written::of);
        }
        if (end instanceof End.Snoozed s) {
            return journal.snoozeUntil(lease, s.due()).map(Written::of);
        }
        if (end instanceof End.Suspended s) {
            return suspensions.suspend(lease, s.waitFor());
        }
        if (end instanceof End.Cancelled c) {
            return journal.cancelled(lease, c.result(), c.error()).map(Written::of);
        }
        if (end instanceof End.Released) {
            return journal.release(lease).map(Written::of);
        }
        if (end instanceof End.HandedBack) {
            return journal.handBackUnstarted(lease).map(Written::of);
        }
        return Future.succeededFuture(Written.FENCED); // End.Fenced: another holds the lease
    }

    private Future<Written> succeedSpawning(Lease lease, Task spawner, End.Succeeded end) {
        return (spawner != null ? Future.succeededFuture(spawner) : flows.spawner(lease.taskId()))
                .compose(task -> task == null
                        ? Future.succeededFuture((TaskState) null)
                        : spawns.plan(task, end.spawn())
                                .compose(plan -> flows.succeedSpawning(lease, end.result(), plan, end.cancelWins())))
                .map(Written::of);
    }
}
