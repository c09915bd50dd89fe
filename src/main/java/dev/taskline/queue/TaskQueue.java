package dev.taskline.queue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.BlockedTasks;
import dev.taskline.model.ClaimGate;
import dev.taskline.model.Insert;
import dev.taskline.model.Lease;
import dev.taskline.model.Task;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.function.Consumer;
import java.util.function.Predicate;

/**
 * One named queue's tasks on this node: the waiting ones ({@link WaitingLine}, in {@link Order}),
 * bounded by {@code capacity}, and the {@link Scheduled} ones (delayed, or waiting out a retry's
 * backoff), bounded by {@code scheduledCapacity}. It composes the parts that each keep one
 * account, and holds the one lock they are all kept under: the {@link Room} that submissions
 * reserve, the {@link Custody} of every task held here, the {@link Gates} (keys and rate budgets)
 * that hold tasks aside, and the {@link Slots} with the tasks claimed ahead of them and the pause.
 *
 * <p>Thread-safe: HTTP and worker verticles run on different event loops. The lock is held only for
 * a few heap operations; listeners run outside it.
 */
public final class TaskQueue {

    private final QueueConfig config;
    private final WaitingLine waiting;
    private final Scheduled scheduled = new Scheduled();
    private final Custody custody;
    private final Gates gates;
    private final Slots slots;
    private final Room room;
    private Runnable onAvailable = () -> {};
    private Runnable onRoom = () -> {};
    private Runnable onScheduled = () -> {};
    private Consumer<String> onHeld = queue -> {};
    private Consumer<String> onKeyFreed = queue -> {};
    /** Called (outside the lock, with the queue's name) when a slot freed and nothing waits here for it. */
    private Consumer<String> onIdleSlot = queue -> {};

    private boolean journalHasMore;
    private long keysFreed;

    public TaskQueue(QueueConfig config) {
        this(config, BlockedTasks.NONE);
    }

    /** @param blocked each tenant's blocked flow tasks in this queue, which its tenant limit counts too */
    public TaskQueue(QueueConfig config, BlockedTasks blocked) {
        this.config = config;
        Comparator<Task> waitingOrder = Order.of(config.agingPerSecond());
        this.waiting = new WaitingLine(waitingOrder, config.fairness().tenants(), config.fairness()::weight);
        this.custody = new Custody(config.tenantLimit(), tenant -> blocked.of(config.name(), tenant));
        this.gates = new Gates(config, waitingOrder, waiting);
        this.slots = new Slots(config.slots(), config.remote());
        this.room = new Room(config, waitingOrder, waiting, scheduled, custody, gates, slots);
    }

    public String name() {
        return config.name();
    }

    public QueueConfig config() {
        return config;
    }

    /**
     * The worker that runs this queue's tasks on this node: a submission that finds it with a free
     * slot and nothing waiting is journaled as already claimed by it, under a lease of {@code
     * leaseFor}. Until a worker is attached, every task waits in line.
     */
    public synchronized void servedBy(String workerId, Duration leaseFor) {
        slots.servedBy(workerId, leaseFor);
    }

    /** Called (outside the lock) whenever tasks became waiting; the worker uses it to wake up. */
    public synchronized void onAvailable(Runnable listener) {
        this.onAvailable = listener;
    }

    /**
     * Called (outside the lock) when the queue falls to half its capacity while the journal is known
     * to hold more waiting work than fitted: recovery uses it to page in at once instead of waiting
     * for its next timed pass.
     */
    public synchronized void onRoom(Runnable listener) {
        this.onRoom = listener;
    }

    /**
     * Called (outside the lock, with the queue's name) when due tasks came into line here that this
     * node cannot start now, its slots all taken: another node may, and is told (see cluster).
     */
    public synchronized void onHeld(Consumer<String> listener) {
        this.onHeld = listener;
    }

    /**
     * Called (outside the lock, with the queue's name) when a task of a bounded key left a worker here
     * after its end or its return to pending was journaled: room under its key, which other nodes'
     * tasks of that key may wait for.
     */
    public synchronized void onKeyFreed(Consumer<String> listener) {
        this.onKeyFreed = listener;
    }

    /** Called when a slot freed with nothing waiting here for it: another node may hold work for it. */
    public synchronized void onIdleSlot(Consumer<String> listener) {
        this.onIdleSlot = listener;
    }

    /** What to call when tasks just came into line: the held listener if more wait than free slots take. */
    private Consumer<String> heldSignal() {
        return !startsHeld() && waiting.size() > Math.max(0, slots.free()) ? onHeld : null;
    }

    /** The key-freed listener when {@code id} held room under a bounded key here, else null. */
    private Consumer<String> keyFreed(UUID id) {
        return config.keyLimits().any() && gates.keyedOut(id) ? onKeyFreed : null;
    }

    private void tell(Consumer<String> listener) {
        if (listener != null) {
            listener.accept(config.name());
        }
    }

    /** Called (outside the lock) when a task was scheduled, so the promoter can set its timer. */
    public synchronized void onScheduled(Runnable listener) {
        this.onScheduled = listener;
    }

    /**
     * Pauses or resumes the queue. Either way its worker is told: on a pause, to hand back the tasks
     * it holds leased and has not started; on a resume, to start again.
     */
    public void paused(boolean pause) {
        Runnable listener;
        synchronized (this) {
            if (!slots.pause(pause)) {
                return;
            }
            listener = onAvailable;
        }
        listener.run();
    }

    public synchronized boolean paused() {
        return slots.paused();
    }

    /** Recovery found more waiting tasks in the journal than this queue had room for. */
    public synchronized void journalHasMore(boolean more) {
        this.journalHasMore = more;
    }

    /**
     * Takes room for tasks of {@code tenant} (null: none) about to be journaled, all or none (see
     * {@link Room#take}). The caller journals {@link Reservation#inserts()}, then commits or aborts.
     */
    public Reservation reserve(List<Insert> tasks, String tenant, Instant now) {
        Room.Ask ask = Room.Ask.of(tasks, now, gates);
        Room.Taken taken;
        synchronized (this) {
            taken = room.take(ask, tenant, startsHeld());
        }
        if (taken.refusal() != null) {
            return new Reservation(this, taken.refusal(), tenant, taken.refused());
        }
        int dispatch = taken.dispatch();
        return new Reservation(
                this,
                tenant,
                room.inserts(ask, taken, now),
                now,
                ask.later().size(),
                ask.due().size() - dispatch,
                dispatch);
    }

    /** See {@link Reservation#commit}. */
    void commit(Reservation reservation) {
        List<Dispatched> leased = new ArrayList<>(reservation.dispatchedCount());
        for (Insert insert : reservation.inserts()) {
            if (insert.claimed()) {
                leased.add(new Dispatched(insert.journaledTask(), insert.lease()));
            }
        }
        Runnable available = null;
        Runnable onSched = null;
        Consumer<String> held = null;
        synchronized (this) {
            reservation.settle();
            room.commit(reservation, leased);
            if (reservation.waitingCount() + reservation.dispatchedCount() > 0) {
                available = onAvailable;
            }
            if (reservation.waitingCount() > 0) {
                held = heldSignal();
            }
            if (reservation.scheduledCount() > 0) {
                onSched = onScheduled;
            }
        }
        if (available != null) {
            available.run();
        }
        if (onSched != null) {
            onSched.run();
        }
        tell(held);
    }

    /** See {@link Reservation#abort}. */
    synchronized void abort(Reservation reservation) {
        reservation.settle();
        room.abort(reservation);
    }

    /** The next task admitted straight to a slot, already running and leased, or null. */
    public synchronized Dispatched pollDispatched() {
        return slots.pollDispatched();
    }

    /**
     * A task leased to a worker and not started, with the lease it was journaled under: admitted
     * straight to it, or claimed ahead.
     */
    public record Dispatched(Task task, Lease lease) {}

    /**
     * A task this node ran went back to pending with a future due time (a retry's backoff, a
     * snooze): hold it until then. When the scheduled set is full it is handed back instead, stays in
     * the journal alone and is paged in when due. True when it is held.
     */
    public boolean reschedule(Task task) {
        return reschedule(task, Stage.RUNNING);
    }

    /** As {@link #reschedule(Task)}, for a task that left a local worker at {@code stage}. */
    public boolean reschedule(Task task, Stage stage) {
        Runnable listener;
        Runnable available;
        boolean kept;
        Consumer<String> freed;
        synchronized (this) {
            slots.leave(stage);
            freed = keyFreed(task.id());
            available = gates.back(task.id()) ? onAvailable : null;
            kept = room.hasScheduledRoom();
            if (kept) {
                scheduled.add(task);
            } else {
                custody.left();
                custody.release(task.id());
            }
            listener = kept ? onScheduled : null;
        }
        run(available);
        run(listener);
        tell(freed);
        return kept;
    }

    /** A task this node ran left its custody: it ended, or the journal says it is someone else's. */
    public void done(UUID id) {
        done(id, Stage.RUNNING);
    }

    /** As {@link #done(UUID)}, for a task that left a local worker at {@code stage}. */
    public void done(UUID id, Stage stage) {
        Runnable available;
        Runnable listener;
        Consumer<String> freed;
        synchronized (this) {
            slots.leave(stage);
            custody.left();
            custody.release(id);
            freed = stage == Stage.CLAIMED ? null : keyFreed(id);
            available = gates.back(id) ? onAvailable : null;
            listener = stage == Stage.CLAIMED ? roomSignal() : null;
        }
        run(available);
        run(listener);
        tell(freed);
    }

    /** Where a task handed to a worker stands; see {@link Slots}. */
    public enum Stage {
        CLAIMED,
        RUNNING,
        FINISHING
    }

    /** A local worker started the handler of a task it held claimed. */
    public synchronized void started() {
        slots.started();
    }

    /** A local worker's handler returned; the task's end is being journaled and its slot is free. */
    public void returned() {
        Runnable listener;
        Consumer<String> idle;
        synchronized (this) {
            slots.returned();
            // A task claimed ahead took this slot's place in the count: that room is free now.
            listener = roomSignal();
            idle = waiting.isEmpty() && !startsHeld() ? onIdleSlot : null;
        }
        listener.run();
        tell(idle);
    }

    /** What to tell recovery when the queue has fallen to half while the journal holds more: nothing else. */
    private Runnable roomSignal() {
        if (journalHasMore && room.occupied() <= config.capacity() / 2) {
            journalHasMore = false;
            return onRoom;
        }
        return () -> {};
    }

    /**
     * How many tasks a local worker may hold claimed beyond its free slots, so that a slot that frees
     * finds its next task leased already instead of waiting for a claim's round trip.
     */
    public synchronized void claimAhead(int tasks) {
        slots.claimAhead(tasks);
    }

    /**
     * For a local worker: up to {@code max} waiting tasks, best first, as far as its slots and the
     * tasks it may claim ahead allow. Each counts as claimed until {@link #started}, {@link #done} or
     * {@link #reschedule}; the worker claims it in the journal.
     */
    public List<Task> pollAhead(int max) {
        List<Task> taken = new ArrayList<>();
        Runnable listener = null;
        synchronized (this) {
            int want = startsHeld() ? 0 : Math.min(max, slots.claimRoom());
            // A gated task (a bounded key, a rate limit) is claimed only into a free slot, never ahead: its
            // room is shared by every node, and a task leased here while it waits for a slot would hold
            // that room from a node that could run it now. Nothing is claimed ahead of it either, or a
            // steady stream of other tasks would keep the slots it waits for always spoken for. Likewise a
            // task that must start by a deadline: its claim is its start, and leased ahead it could wait
            // past the deadline for a slot, behind handlers slower than the ones that set the claims ahead.
            int free = slots.free();
            while (taken.size() < want && !waiting.isEmpty()) {
                Task next = waiting.peek();
                if (taken.size() >= free && (gates.gated(next) || next.deadlineHolds())) {
                    break;
                }
                taken.add(gates.out(waiting.poll()));
            }
            slots.handedOut(taken.size(), Stage.CLAIMED);
            listener = taken.isEmpty() ? null : roomSignal();
        }
        run(listener);
        return taken;
    }

    /**
     * Moves scheduled tasks that are due at {@code nowMillis} to waiting, as far as waiting has room.
     * Returns how many moved.
     */
    public int promoteDue(long nowMillis) {
        int moved = 0;
        Runnable listener;
        Consumer<String> held;
        synchronized (this) {
            while (scheduled.anyDue(nowMillis) && room.hasWaitingRoom()) {
                gates.line(scheduled.pollDue(nowMillis));
                moved++;
            }
            listener = onAvailable;
            held = moved > 0 ? heldSignal() : null;
        }
        if (moved > 0) {
            listener.run();
        }
        tell(held);
        return moved;
    }

    /** When the earliest scheduled task is due, or {@link Long#MAX_VALUE} when none is scheduled. */
    public synchronized long nextDueMillis() {
        return scheduled.nextDueMillis();
    }

    /**
     * Adds tasks read back from the journal (start-up, page-in), skipping any this node already
     * holds and any beyond capacity. Returns how many were added.
     */
    public int offer(List<Task> tasks) {
        int added = 0;
        Runnable listener;
        Consumer<String> held;
        synchronized (this) {
            for (Task task : tasks) {
                if (!room.hasWaitingRoom()) {
                    break;
                }
                if (custody.hold(task.id(), task.tenant())) {
                    gates.line(task);
                    added++;
                }
            }
            custody.accepted(added);
            listener = onAvailable;
            held = added > 0 ? heldSignal() : null;
        }
        if (added > 0) {
            listener.run();
        }
        tell(held);
        return added;
    }

    /**
     * The next task to run, or null when none waits or every slot is taken. It counts as running
     * until {@link #done} or {@link #reschedule}.
     */
    public Task poll() {
        Task task;
        Runnable listener = null;
        synchronized (this) {
            task = !startsHeld() && slots.free() > 0 ? gates.out(waiting.poll()) : null;
            if (task != null) {
                slots.handedOut(1, Stage.RUNNING);
                listener = roomSignal();
            }
        }
        run(listener);
        return task;
    }

    /**
     * Up to {@code max} waiting tasks that {@code takes} accepts, best first, as far as slots are
     * free: {@link #poll} for a worker that runs only some of the queue's tasks (some types, one
     * tenant's). Each counts as running until {@link #done} or {@link #reschedule}. The others keep
     * their places.
     */
    public List<Task> poll(int max, Predicate<Task> takes) {
        List<Task> taken;
        Runnable listener;
        synchronized (this) {
            int want = Math.min(max, slots.free());
            if (startsHeld() || want <= 0 || waiting.isEmpty()) {
                return List.of();
            }
            taken = waiting.takeBest(want, takes);
            if (taken.isEmpty()) {
                return List.of();
            }
            taken.forEach(gates::out);
            slots.handedOut(taken.size(), Stage.RUNNING);
            listener = roomSignal();
        }
        listener.run();
        return taken;
    }

    /** Whether {@link #poll} could hand out a task now: one waits and a slot is free. */
    public synchronized boolean canPoll() {
        return !startsHeld() && !waiting.isEmpty() && slots.free() > 0;
    }

    /**
     * Drops a task from waiting or scheduled (it was cancelled). True when it was there; a task
     * already running is not affected.
     */
    public boolean remove(UUID id) {
        boolean removed;
        Runnable available = null;
        synchronized (this) {
            if (!custody.holds(id)) {
                return false; // not in this node's custody (the deadline sweep asks of every node's tasks)
            }
            Task found = waiting.remove(id);
            removed = found != null;
            // Its key's next task takes its place in line: the worker is told, to claim it.
            if (removed && gates.leftLine(found)) {
                available = onAvailable;
            }
            removed = removed || scheduled.remove(id) || gates.removeAside(id);
            if (removed) {
                custody.release(id);
                custody.left();
            }
        }
        run(available);
        return removed;
    }

    /**
     * What a task about to be admitted due now would find, for an estimate of when it starts: whether
     * the queue is paused, the slots free now, and, for each entry of {@code peers} (tasks of its own
     * submission ahead of it), how many tasks start before it: those in line that {@link #poll} would
     * hand out first, and those claimed ahead of a free slot. Tasks reserved by submissions not
     * journaled yet, or held aside for their key, are not counted: the count errs low, never high.
     * One pass over the line (the probe's tenant's, when tenants take turns), under the lock.
     */
    public synchronized Outlook outlook(Task probe, int[] peers) {
        int free = slots.free();
        int[] before = waiting.startsBefore(probe, peers);
        for (int i = 0; i < before.length; i++) {
            before[i] += Math.max(0, -free);
        }
        return new Outlook(slots.paused(), Math.max(0, free), before);
    }

    /** See {@link #outlook}; {@code startsBefore} has one entry per peer count asked. */
    public record Outlook(boolean paused, int freeSlots, int[] startsBefore) {}

    /** One consistent reading of the custody counts. */
    public synchronized Counts counts() {
        return new Counts(
                custody.accepted(),
                custody.finished(),
                waiting.size() + gates.aside() + slots.claimed(),
                scheduled.size(),
                slots.running() + slots.finishing(),
                slots.claimed(),
                slots.finishing());
    }

    /**
     * Custody counts; {@code accepted - finished == waiting + scheduled + running} always. Waiting
     * includes the tasks claimed ahead of a free slot ({@code claimedAhead}: their handlers have not
     * started); running includes those whose handler returned and whose end is being journaled
     * ({@code finishing}: the journal has them running until it commits), so running may exceed the
     * slots by that many while no more than the slots' handlers run.
     */
    public record Counts(
            long accepted, long finished, int waiting, int scheduled, int running, int claimedAhead, int finishing) {
        public long unfinished() {
            return (long) waiting + scheduled + running;
        }
    }

    public synchronized int waiting() {
        return waiting.size() + gates.aside();
    }

    /** Tasks waiting aside because their concurrency key is at its bound (here, or on other nodes). */
    public synchronized int heldByKeys() {
        return gates.heldByKeys();
    }

    /** Tasks waiting because a rate budget is spent: all in line, when it is the queue's own; else its key's. */
    public synchronized int heldByRate() {
        return gates.heldByRate();
    }

    public synchronized int scheduled() {
        return scheduled.size();
    }

    /** Room left for new tasks: capacity less waiting, claimed ahead and reserved. */
    public synchronized int room() {
        return config.capacity() - room.occupied();
    }

    /**
     * The worker's claim of {@code task} found its key full in the journal (other nodes run as many of
     * its tasks as the bound allows): the task is pending still and waits aside, and its key takes no
     * more claims until {@link #retryKey}. False, and nothing changed, when the queue did not hand
     * it out as a task of a bounded key (its bound was taken off meanwhile): the caller gives it back
     * as a lost claim.
     */
    public synchronized boolean keyFull(Task task, Stage stage) {
        if (!gates.keyFull(task)) {
            return false;
        }
        slots.leave(stage);
        return true;
    }

    /** A key found full in the journal may be tried again: its best tasks go back in line. */
    public void retryKey(String key) {
        Runnable listener;
        synchronized (this) {
            listener = gates.retryKey(key) ? onAvailable : null;
        }
        run(listener);
    }

    /** Another node freed room under some key of this queue: every key found full is tried again. */
    public void retryKeys() {
        Runnable listener;
        synchronized (this) {
            keysFreed++;
            listener = gates.retryKeys() ? onAvailable : null;
        }
        run(listener);
    }

    /**
     * How many times other nodes said room freed under this queue's keys: a claim refused for a full
     * key while this moved was refused on a reading older than the news, and is tried again at once.
     */
    public synchronized long keysFreed() {
        return keysFreed;
    }

    /**
     * How many more tasks this node could start now: free slots that no task here waits for. What a
     * wake-up from another node pages in, and no more: a node holds in its line only what it can start,
     * so that work another node could start now is not hoarded here.
     */
    public synchronized int startableNow() {
        if (startsHeld()) {
            return 0;
        }
        return Math.max(0, slots.free() - waiting.size() - room.reserved());
    }

    /**
     * The worker's claim of {@code task} found a rate budget spent (on this node or others): the task
     * is pending still and waits, for the queue's own budget with everything else in line (nothing is
     * handed out until {@link #liftRate}), for a key's own aside with its key's tasks. False, and
     * nothing changed, when the queue did not hand it out under a rate limit: the caller gives it back
     * as a lost claim.
     */
    public boolean rateFull(Task task, Stage stage) {
        if (config.rateLimit() == null) {
            return false;
        }
        synchronized (this) {
            if (!custody.holds(task.id())) {
                return false;
            }
            slots.leave(stage);
            gates.rateFull(task);
        }
        return true;
    }

    /** The rate budget {@code bucket} ({@link ClaimGate#bucket}) may have a start again: its tasks may be claimed. */
    public void liftRate(String bucket) {
        Runnable listener;
        synchronized (this) {
            listener = gates.liftRate(bucket) ? onAvailable : null;
        }
        run(listener);
    }

    /**
     * What the journal must check before it starts {@code task} (its key's bound, its rate budget),
     * or null when its queue gates nothing and a plain claim will do.
     */
    public ClaimGate gate(Task task) {
        return gates.gate(task);
    }

    /** Every id this node holds, for page-in to skip. */
    public synchronized List<UUID> heldIds() {
        return custody.ids();
    }

    /** Unfinished and reserved tasks of {@code tenant} in this queue, its blocked flow tasks with them. */
    public synchronized int tenantHeld(String tenant) {
        return custody.tenantHeld(tenant);
    }

    /** The worker's claim of a polled task returned (taken or lost): it is no longer pending here. */
    public synchronized void claimReturned() {
        slots.claimReturned();
    }

    /**
     * How many of the tasks this node holds the journal shows as pending and due now: waiting,
     * scheduled and due, being claimed, or being inserted.
     */
    public synchronized int heldPending(long nowMillis) {
        return waiting.size() + gates.aside() + slots.claiming() + room.reserved() + scheduled.dueAt(nowMillis);
    }

    /** How long the task first in line has waited, in ms at {@code nowMillis}; 0 when none wait. */
    public synchronized long oldestWaitingAgeMs(long nowMillis) {
        long oldest = Math.min(waiting.firstDue(), gates.firstDueAside());
        return oldest == Long.MAX_VALUE ? 0 : Math.max(0, nowMillis - oldest);
    }

    /** Whether nothing may be handed out now: paused by an operator, or the queue's rate budget spent. */
    private boolean startsHeld() {
        return slots.paused() || gates.rateHeld();
    }

    private static void run(Runnable listener) {
        if (listener != null) {
            listener.run();
        }
    }
}
