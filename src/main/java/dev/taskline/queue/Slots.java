package dev.taskline.queue;

import dev.taskline.queue.QueueSlots.Dispatched;
import dev.taskline.queue.QueueSlots.Stage;
import java.time.Duration;
import java.util.ArrayDeque;
import java.util.List;

/**
 * One queue's slots on this node and the tasks that hold them, by stage; the tasks its worker may
 * claim ahead of a free slot; the operator's pause; and the worker that submissions may be
 * dispatched to at once. Not thread-safe: {@link TaskQueue} holds its lock around every call.
 *
 * <p>A task handed to a worker goes through up to three stages. Claimed: its claim is in flight or
 * it is leased and waits here for a slot (a local worker claims ahead, see {@link
 * TaskQueue#pollAhead}). Running: its handler runs (or a remote worker holds it). Finishing: its
 * handler returned and its end is being journaled; its slot is free, but it is not claimable and
 * not finished until that commits.
 */
final class Slots {

    private final int slots;
    private final boolean remote;
    private int claimed;
    private int running;
    private int finishing;
    /** Tasks a local worker may hold claimed beyond its free slots; 0 for a remote queue. */
    private int ahead;
    /** Slots taken by tasks whose claimed insert has not committed yet: not in custody until then. */
    private int dispatching;
    /** Tasks handed to the worker whose claim has not returned: still pending in the journal. */
    private int claiming;
    /**
     * Paused by an operator (see control.QueuePauses): nothing is handed to a worker, at admission or
     * from waiting. What runs goes on, and submissions are still taken within capacity.
     */
    private boolean paused;

    private String workerId;
    private Duration leaseFor;
    /** Tasks admitted straight to a slot (journaled claimed), for the worker to start first. */
    private final ArrayDeque<Dispatched> ready = new ArrayDeque<>();

    Slots(int slots, boolean remote) {
        this.slots = slots;
        this.remote = remote;
    }

    /** Slots no task holds: negative by as many as are claimed ahead of them. */
    int free() {
        return slots - claimed - running - dispatching;
    }

    /**
     * How many more tasks a local worker may take claimed: its slots and claims ahead, less what it
     * holds. Ends being journaled do not count: their slots are free, the worker keeps their leases
     * alive until they commit, and the claims they wait behind pace them. (Counted beyond the slots
     * and claims ahead, they held up 50-slot drains by a sixth: a busy journal has a few hundred ends
     * in flight as a rule.)
     */
    int claimRoom() {
        return slots + ahead - claimed - running - dispatching;
    }

    /** Tasks held claimed beyond the slots: they wait for a slot, leased already. */
    int aheadOfSlots() {
        return Math.max(0, -free());
    }

    /** How many held claimed beyond the slots {@code more} dispatched tasks would leave. */
    int beyondSlotsWith(int more) {
        return Math.max(0, claimed + running + dispatching + more - slots);
    }

    void leave(Stage stage) {
        switch (stage) {
            case CLAIMED -> claimed--;
            case RUNNING -> running--;
            case FINISHING -> finishing--;
        }
    }

    /** {@code n} tasks taken out of waiting for a claim, at {@code stage} (claimed ahead, or running). */
    void handedOut(int n, Stage stage) {
        if (stage == Stage.CLAIMED) {
            claimed += n;
        } else {
            running += n;
        }
        claiming += n;
    }

    /** The claim of a task handed out returned (taken or lost). */
    void claimReturned() {
        claiming--;
    }

    /** A local worker started the handler of a task it held claimed. */
    void started() {
        claimed--;
        running++;
    }

    /** A local worker's handler returned; the task's end is being journaled. */
    void returned() {
        running--;
        finishing++;
    }

    void claimAhead(int tasks) {
        ahead = remote ? 0 : Math.max(0, tasks);
    }

    /** {@code n} submitted tasks are to be journaled claimed by the worker: their slots are taken. */
    void dispatching(int n) {
        dispatching += n;
    }

    /**
     * The claimed insert of {@code leased} committed: the tasks hold their slots as claimed (a local
     * worker starts them) or running (a remote worker was told of them), and wait to be taken.
     */
    void dispatched(List<Dispatched> leased) {
        dispatching -= leased.size();
        if (remote) {
            running += leased.size();
        } else {
            claimed += leased.size();
        }
        ready.addAll(leased);
    }

    /** The claimed insert of {@code n} tasks was given up: their slots are free again. */
    void undispatched(int n) {
        dispatching -= n;
    }

    /** The next task admitted straight to a slot, or null. */
    Dispatched pollDispatched() {
        return ready.poll();
    }

    /** Whether that changed anything. */
    boolean pause(boolean pause) {
        boolean changed = paused != pause;
        paused = pause;
        return changed;
    }

    boolean paused() {
        return paused;
    }

    void servedBy(String workerId, Duration leaseFor) {
        this.workerId = workerId;
        this.leaseFor = leaseFor;
    }

    String workerId() {
        return workerId;
    }

    Duration leaseFor() {
        return leaseFor;
    }

    int claimed() {
        return claimed;
    }

    int running() {
        return running;
    }

    int finishing() {
        return finishing;
    }

    int claiming() {
        return claiming;
    }
}
