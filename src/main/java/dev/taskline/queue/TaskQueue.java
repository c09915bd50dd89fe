package dev.taskline.queue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.BlockedTasks;
import dev.taskline.model.ClaimGate;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * One named queue's tasks on this node: the waiting ones ({@link WaitingLine}, in {@link Order}),
 * bounded by {@code capacity}, and the {@link Scheduled} ones (delayed, or waiting out a retry's
 * backoff), bounded by {@code scheduledCapacity}. It composes the parts that each keep one
 * account, and holds the one lock they are all kept under: the {@link Room} that submissions
 * reserve, the {@link Custody} of every task held here, the {@link Gates} (keys and rate budgets)
 * that hold tasks aside, and the {@link Slots} with the tasks claimed ahead of them and the pause.
 *
 * <p>Each part of the node sees it through one face: admission its {@link QueueRoom}, workers its
 * {@link QueueSlots} (which says the order they keep), recovery and the parts that hand it tasks
 * from the journal its {@link QueueCustody}, the operator's switch its {@link QueueSwitch}, and
 * readers its {@link QueueReadings}. It calls back up through one port, its {@link QueueSignals}.
 *
 * <p>Thread-safe: HTTP and worker verticles run on different event loops. The lock is held only for
 * a few heap operations; signals are given outside it.
 */
public final class TaskQueue implements QueueRoom, QueueSlots, QueueCustody, QueueSwitch {

    private final QueueConfig config;
    private final WaitingLine waiting;
    private final Scheduled scheduled = new Scheduled();
    private final Custody custody;
    private final Gates gates;
    private final Slots slots;
    private final Room room;
    /** Given once by the wiring; read outside the lock, so volatile. */
    private volatile QueueSignals signals = QueueSignals.NONE;

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

    @Override
    public String name() {
        return config.name();
    }

    @Override
    public QueueConfig config() {
        return config;
    }

    /** The port this queue signals through: given once (see {@link QueueRegistry#signals}). */
    synchronized void signals(QueueSignals signals) {
        if (this.signals != QueueSignals.NONE) {
            throw new IllegalStateException("queue " + name() + " was given its signals already");
        }
        this.signals = signals;
    }

    @Override
    public synchronized void servedBy(String workerId, Duration leaseFor) {
        slots.servedBy(workerId, leaseFor);
    }

    /** Whether tasks that just came into line should be told to other nodes: more wait than free slots take. */
    private boolean heldNow() {
        return !startsHeld() && waiting.size() > Math.max(0, slots.free());
    }

    /** Whether {@code id} held room under a bounded key here, which its leaving frees. */
    private boolean freesKey(UUID id) {
        return config.keyLimits().any() && gates.keyedOut(id);
    }

    @Override
    public void paused(boolean pause) {
        synchronized (this) {
            if (!slots.pause(pause)) {
                return;
            }
        }
        signals.available(name());
    }

    @Override
    public synchronized boolean paused() {
        return slots.paused();
    }

    @Override
    public synchronized void journalHasMore(boolean more) {
        this.journalHasMore = more;
    }

    @Override
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
        boolean available;
        boolean held;
        synchronized (this) {
            reservation.settle();
            room.commit(reservation, leased);
            available = reservation.waitingCount() + reservation.dispatchedCount() > 0;
            held = reservation.waitingCount() > 0 && heldNow();
        }
        QueueSignals to = signals;
        if (available) {
            to.available(name());
        }
        if (reservation.scheduledCount() > 0) {
            to.scheduled(name());
        }
        if (held) {
            to.held(name());
        }
    }

    /** See {@link Reservation#abort}. */
    synchronized void abort(Reservation reservation) {
        reservation.settle();
        room.abort(reservation);
    }

    @Override
    public synchronized Dispatched pollDispatched() {
        return slots.pollDispatched();
    }

    @Override
    public boolean reschedule(Task task) {
        return reschedule(task, Stage.RUNNING);
    }

    @Override
    public boolean reschedule(Task task, Stage stage) {
        boolean available;
        boolean kept;
        boolean freed;
        synchronized (this) {
            slots.leave(stage);
            freed = freesKey(task.id());
            available = gates.back(task.id());
            kept = room.hasScheduledRoom();
            if (kept) {
                scheduled.add(task);
            } else {
                custody.left();
                custody.release(task.id());
            }
        }
        QueueSignals to = signals;
        if (available) {
            to.available(name());
        }
        if (kept) {
            to.scheduled(name());
        }
        if (freed) {
            to.keyFreed(name());
        }
        return kept;
    }

    @Override
    public void done(UUID id) {
        done(id, Stage.RUNNING);
    }

    @Override
    public void done(UUID id, Stage stage) {
        boolean available;
        boolean roomFreed;
        boolean freed;
        synchronized (this) {
            slots.leave(stage);
            custody.left();
            custody.release(id);
            freed = stage != Stage.CLAIMED && freesKey(id);
            available = gates.back(id);
            roomFreed = stage == Stage.CLAIMED && roomNow();
        }
        QueueSignals to = signals;
        if (available) {
            to.available(name());
        }
        if (roomFreed) {
            to.room(name());
        }
        if (freed) {
            to.keyFreed(name());
        }
    }

    @Override
    public synchronized Stage started() {
        slots.started();
        return Stage.RUNNING;
    }

    @Override
    public Stage returned() {
        boolean roomFreed;
        boolean idle;
        synchronized (this) {
            slots.returned();
            // A task claimed ahead took this slot's place in the count: that room is free now.
            roomFreed = roomNow();
            idle = waiting.isEmpty() && !startsHeld();
        }
        QueueSignals to = signals;
        if (roomFreed) {
            to.room(name());
        }
        if (idle) {
            to.idleSlot(name());
        }
        return Stage.FINISHING;
    }

    /**
     * Whether to tell recovery that the queue has fallen to half while the journal holds more; told
     * once, until recovery says again that it does.
     */
    private boolean roomNow() {
        if (journalHasMore && room.occupied() <= config.capacity() / 2) {
            journalHasMore = false;
            return true;
        }
        return false;
    }

    @Override
    public synchronized void claimAhead(int tasks) {
        slots.claimAhead(tasks);
    }

    /**
     * {@inheritDoc} Each counts as claimed until {@link #started}, {@link #done} or {@link
     * #reschedule}; the worker claims it in the journal.
     */
    @Override
    public List<Task> pollAhead(int max) {
        List<Task> taken = new ArrayList<>();
        boolean roomFreed;
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
            roomFreed = !taken.isEmpty() && roomNow();
        }
        if (roomFreed) {
            signals.room(name());
        }
        return taken;
    }

    /**
     * Moves scheduled tasks that are due at {@code nowMillis} to waiting, as far as waiting has room.
     * Returns how many moved.
     */
    int promoteDue(long nowMillis) {
        int moved = 0;
        boolean held;
        synchronized (this) {
            while (scheduled.anyDue(nowMillis) && room.hasWaitingRoom()) {
                gates.line(scheduled.pollDue(nowMillis));
                moved++;
            }
            held = moved > 0 && heldNow();
        }
        cameIntoLine(moved, held);
        return moved;
    }

    /** When the earliest scheduled task is due, or {@link Long#MAX_VALUE} when none is scheduled. */
    synchronized long nextDueMillis() {
        return scheduled.nextDueMillis();
    }

    @Override
    public int offer(List<Task> tasks) {
        int added = 0;
        boolean held;
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
            held = added > 0 && heldNow();
        }
        cameIntoLine(added, held);
        return added;
    }

    /** Tells of {@code n} tasks that came into line: to the worker, and to other nodes when {@code held}. */
    private void cameIntoLine(int n, boolean held) {
        QueueSignals to = signals;
        if (n > 0) {
            to.available(name());
        }
        if (held) {
            to.held(name());
        }
    }

    @Override
    public int offerOrLeave(List<Task> due, int made) {
        int added = offer(due);
        if (added < made) {
            journalHasMore(true);
        }
        return added;
    }

    /**
     * The next task to run, or null when none waits or every slot is taken. It counts as running
     * until {@link #done} or {@link #reschedule}.
     */
    Task poll() {
        Task task;
        boolean roomFreed = false;
        synchronized (this) {
            task = !startsHeld() && slots.free() > 0 ? gates.out(waiting.poll()) : null;
            if (task != null) {
                slots.handedOut(1, Stage.RUNNING);
                roomFreed = roomNow();
            }
        }
        if (roomFreed) {
            signals.room(name());
        }
        return task;
    }

    /**
     * {@inheritDoc} {@link #poll()} for a worker that runs only some of the queue's tasks (some
     * types, one tenant's). Each counts as running until {@link #done} or {@link #reschedule}.
     */
    @Override
    public List<Task> poll(int max, Predicate<Task> takes) {
        List<Task> taken;
        boolean roomFreed;
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
            roomFreed = roomNow();
        }
        if (roomFreed) {
            signals.room(name());
        }
        return taken;
    }

    @Override
    public synchronized boolean canPoll() {
        return !startsHeld() && !waiting.isEmpty() && slots.free() > 0;
    }

    @Override
    public boolean remove(UUID id) {
        boolean removed;
        boolean available = false;
        synchronized (this) {
            if (!custody.holds(id)) {
                return false; // not in this node's custody (the deadline sweep asks of every node's tasks)
            }
            Task found = waiting.remove(id);
            removed = found != null;
            // Its key's next task takes its place in line: the worker is told, to claim it.
            if (removed && gates.leftLine(found)) {
                available = true;
            }
            removed = removed || scheduled.remove(id) || gates.removeAside(id);
            if (removed) {
                custody.release(id);
                custody.left();
            }
        }
        if (available) {
            signals.available(name());
        }
        return removed;
    }

    @Override
    public synchronized Outlook outlook(Task probe, int[] peers) {
        int free = slots.free();
        int[] before = waiting.startsBefore(probe, peers);
        for (int i = 0; i < before.length; i++) {
            before[i] += Math.max(0, -free);
        }
        return new Outlook(slots.paused(), Math.max(0, free), before);
    }

    @Override
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

    @Override
    public synchronized int waiting() {
        return waiting.size() + gates.aside();
    }

    @Override
    public synchronized int heldByKeys() {
        return gates.heldByKeys();
    }

    @Override
    public synchronized int heldByRate() {
        return gates.heldByRate();
    }

    @Override
    public synchronized int scheduled() {
        return scheduled.size();
    }

    @Override
    public synchronized int room() {
        return config.capacity() - room.occupied();
    }

    @Override
    public synchronized boolean keyFull(Task task, Stage stage) {
        if (!gates.keyFull(task)) {
            return false;
        }
        slots.leave(stage);
        return true;
    }

    @Override
    public void retryKey(String key) {
        boolean available;
        synchronized (this) {
            available = gates.retryKey(key);
        }
        if (available) {
            signals.available(name());
        }
    }

    @Override
    public void retryKeys() {
        boolean available;
        synchronized (this) {
            keysFreed++;
            available = gates.retryKeys();
        }
        if (available) {
            signals.available(name());
        }
    }

    @Override
    public synchronized long keysFreed() {
        return keysFreed;
    }

    @Override
    public synchronized int startableNow() {
        if (startsHeld()) {
            return 0;
        }
        return Math.max(0, slots.free() - waiting.size() - room.reserved());
    }

    @Override
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

    @Override
    public void liftRate(String bucket) {
        boolean available;
        synchronized (this) {
            available = gates.liftRate(bucket);
        }
        if (available) {
            signals.available(name());
        }
    }

    @Override
    public ClaimGate gate(Task task) {
        return gates.gate(task);
    }

    @Override
    public synchronized List<UUID> heldIds() {
        return custody.ids();
    }

    @Override
    public synchronized int tenantHeld(String tenant) {
        return custody.tenantHeld(tenant);
    }

    @Override
    public synchronized void claimReturned() {
        slots.claimReturned();
    }

    @Override
    public synchronized int heldPending(long nowMillis) {
        return waiting.size() + gates.aside() + slots.claiming() + room.reserved() + scheduled.dueAt(nowMillis);
    }

    @Override
    public synchronized long oldestWaitingAgeMs(long nowMillis) {
        long oldest = Math.min(waiting.firstDue(), gates.firstDueAside());
        return oldest == Long.MAX_VALUE ? 0 : Math.max(0, nowMillis - oldest);
    }

    /** Whether nothing may be handed out now: paused by an operator, or the queue's rate budget spent. */
    private boolean startsHeld() {
        return slots.paused() || gates.rateHeld();
    }
}
