package dev.taskline.queue;

import dev.taskline.model.ClaimGate;
import dev.taskline.model.Lease;
import dev.taskline.model.Task;
import java.time.Duration;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * One queue as its workers see it: the tasks they take into its slots, and how each leaves them.
 * The queue counts every task it hands out by {@link Stage} until the worker says where it went,
 * which is what keeps {@code accepted - finished == waiting + scheduled + running} true; so a
 * worker keeps this order for each task, and says each step once:
 *
 * <ol>
 *   <li>It is handed out: by {@link #pollAhead} (a local worker; {@link Stage#CLAIMED}) or {@link
 *       #poll(int, Predicate)} (a remote worker's claim; {@link Stage#RUNNING}), and the worker
 *       claims it in the journal and calls {@link #claimReturned} when that claim returns, taken or
 *       lost. A task from {@link #pollDispatched} was journaled claimed at admission: it is
 *       claimed already, at the stage the worker's kind holds it (claimed here, running for a
 *       remote worker), and has no claim to return.
 *   <li>A local worker that starts a claimed task's handler calls {@link #started} (claimed to
 *       running), and {@link #returned} when the handler returns (running to finishing: its slot is
 *       free, its end is being journaled). Each returns the stage its task stands at after it.
 *   <li>The task leaves the worker once, at the stage it stands at: {@link #done} (it ended, or is
 *       someone else's now), or {@link #reschedule} (back to pending with a later due time), after
 *       the journal has it so; or its claim found its gate full ({@link #keyFull}, {@link #rateFull}:
 *       true means the queue holds it aside again, to be handed out anew).
 * </ol>
 */
public interface QueueSlots extends QueueReadings {

    /** Where a task handed to a worker stands; see {@link Slots}. */
    enum Stage {
        CLAIMED,
        RUNNING,
        FINISHING
    }

    /**
     * A task leased to a worker and not started, with the lease it was journaled under: admitted
     * straight to it, or claimed ahead.
     */
    record Dispatched(Task task, Lease lease) {}

    /**
     * The worker that runs this queue's tasks on this node: a submission that finds it with a free
     * slot and nothing waiting is journaled as already claimed by it, under a lease of {@code
     * leaseFor}. Until a worker is attached (and from when it gives null), every task waits in line.
     */
    void servedBy(String workerId, Duration leaseFor);

    /** The next task admitted straight to a slot, already claimed and leased, or null. */
    Dispatched pollDispatched();

    /**
     * How many tasks a local worker may hold claimed beyond its free slots, so that a slot that frees
     * finds its next task leased already instead of waiting for a claim's round trip.
     */
    void claimAhead(int tasks);

    /**
     * For a local worker: up to {@code max} waiting tasks, best first, as far as its slots and the
     * tasks it may claim ahead allow, each {@link Stage#CLAIMED}.
     */
    List<Task> pollAhead(int max);

    /**
     * For a remote worker's claim: up to {@code max} waiting tasks that {@code takes} accepts, best
     * first, as far as slots are free, each {@link Stage#RUNNING}. The others keep their places.
     */
    List<Task> poll(int max, Predicate<Task> takes);

    /** Whether a task could be handed out now: one waits and a slot is free. */
    boolean canPoll();

    /** The claim of a task handed out returned (taken or lost): it is no longer pending here. */
    void claimReturned();

    /** A local worker started the handler of a task it held claimed: it runs now. */
    Stage started();

    /** A local worker's handler returned: its slot is free, and its task finishing until its end is journaled. */
    Stage returned();

    /** A task handed out as {@link Stage#RUNNING} left its worker: see {@link #done(UUID, Stage)}. */
    void done(UUID id);

    /** A task left its worker at {@code stage} and this node's custody: it ended, or the journal says it is someone else's. */
    void done(UUID id, Stage stage);

    /** A task handed out as {@link Stage#RUNNING} went back to pending: see {@link #reschedule(Task, Stage)}. */
    boolean reschedule(Task task);

    /**
     * A task that left its worker at {@code stage} went back to pending with a future due time (a
     * retry's backoff, a snooze): hold it until then. When the scheduled set is full it is handed back
     * instead, stays in the journal alone and is paged in when due. True when it is held.
     */
    boolean reschedule(Task task, Stage stage);

    /**
     * What the journal must check before it starts {@code task} (its key's bound, its rate budget),
     * or null when its queue gates nothing and a plain claim will do.
     */
    ClaimGate gate(Task task);

    /**
     * The worker's claim of {@code task} found its key full in the journal (other nodes run as many of
     * its tasks as the bound allows): the task is pending still and waits aside, and its key takes no
     * more claims until {@link #retryKey}. False, and nothing changed, when the queue did not hand
     * it out as a task of a bounded key (its bound was taken off meanwhile): the caller gives it back
     * as a lost claim.
     */
    boolean keyFull(Task task, Stage stage);

    /** A key found full in the journal may be tried again: its best tasks go back in line. */
    void retryKey(String key);

    /** Another node freed room under some key of this queue: every key found full is tried again. */
    void retryKeys();

    /**
     * How many times other nodes said room freed under this queue's keys: a claim refused for a full
     * key while this moved was refused on a reading older than the news, and is tried again at once.
     */
    long keysFreed();

    /**
     * The worker's claim of {@code task} found a rate budget spent (on this node or others): the task
     * is pending still and waits, for the queue's own budget with everything else in line (nothing is
     * handed out until {@link #liftRate}), for a key's own aside with its key's tasks. False, and
     * nothing changed, when the queue did not hand it out under a rate limit: the caller gives it back
     * as a lost claim.
     */
    boolean rateFull(Task task, Stage stage);

    /** The rate budget {@code bucket} ({@link ClaimGate#bucket}) may have a start again: its tasks may be claimed. */
    void liftRate(String bucket);
}
