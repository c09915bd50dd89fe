package dev.taskline.queue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.ClaimGate;
import dev.taskline.model.Insert;
import dev.taskline.model.Lease;
import dev.taskline.model.Task;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.IdentityHashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.UUID;
import java.util.function.Predicate;

/**
 * One named queue's tasks on this node: the waiting ones, bounded by {@code capacity}, and the
 * scheduled ones (delayed, or waiting out a retry's backoff), bounded by {@code scheduledCapacity}.
 *
 * <p>Waiting order is effective priority: {@code priority + agingPerSecond * seconds waited}. As
 * every waiting task ages at the same rate, that order never changes while tasks wait, so it is
 * the static key {@code priority - agingPerSecond * dueSeconds}; a heap keeps it, and a steady
 * stream of high-priority work cannot starve an old low-priority task.
 *
 * <p>Admission {@link #reserve reserves} room before it journals a submission and commits the
 * reservation after the journal's commit (or aborts it), so concurrent submissions cannot overshoot
 * the bounds. The queue also tracks every task
 * id this node holds anywhere (reserved, scheduled, waiting, running), so that page-in never loads
 * a second copy of one.
 *
 * <p>Thread-safe: HTTP and worker verticles run on different event loops. The lock is held only for
 * a few heap operations.
 */
public final class TaskQueue {

    private final QueueConfig config;
    private final Comparator<Task> waitingOrder;
    private final WaitingLine waiting;
    private final PriorityQueue<Task> scheduled = new PriorityQueue<>(TaskQueue::dueFirst);
    /** Stands for "no tenant" in {@link #held}; compared by identity, so no tenant's name can be it. */
    @SuppressWarnings("StringOperationCanBeSimplified")
    private static final String NO_TENANT = new String("");
    /** Every task in custody or reserved, with its tenant ({@link #NO_TENANT} for none). */
    private final Map<UUID, String> held = new HashMap<>();
    /** Of those, how many each tenant has: what the queue's tenant limit bounds. */
    private final Map<String, Integer> byTenant = new HashMap<>();
    /** Tasks admitted straight to a slot (journaled claimed), for the worker to start first. */
    private final java.util.ArrayDeque<Dispatched> ready = new java.util.ArrayDeque<>();

    private int reserved;
    private String workerId;
    private Duration leaseFor;
    private int reservedScheduled;
    private Runnable onAvailable = () -> {};
    private Runnable onRoom = () -> {};
    private Runnable onScheduled = () -> {};
    private boolean journalHasMore;
    // Paused by an operator (see control.QueuePauses): nothing is handed to a worker, at admission or
    // from waiting. What runs goes on, and submissions are still taken within capacity.
    private boolean paused;
    // Keyed concurrency (QueueConfig.KeyLimits). A task whose key is at its bound here waits aside, in
    // its key's own line, so that it holds up no other key and no task without one. keyOut counts a
    // key's tasks taken out of waiting (being claimed, claimed, running, finishing), keyInLine those in
    // waiting; the two together never pass the bound. The journal decides across nodes: a key it
    // finds full (other nodes run its tasks) is blocked here until the worker tries it again.
    private final Map<String, PriorityQueue<Task>> keyAside = new HashMap<>();
    private final Map<String, Integer> keyInLine = new HashMap<>();
    private final Map<String, Integer> keyOut = new HashMap<>();
    private final Map<UUID, String> outKeyed = new HashMap<>();
    private final Set<String> keyBlocked = new HashSet<>();
    private int aside;
    // Rate limits (QueueConfig.RateLimit): the journal counts every node's starts and says when a
    // budget is spent. The queue's own budget spent, nothing is handed out until the worker lifts the
    // hold (rateHeld); a key's own (perKey), its tasks wait aside like a full key's (rateBlocked; the
    // tasks without a key are tracked under "", which no key can be).
    private boolean rateHeld;
    private final Set<String> rateBlocked = new HashSet<>();
    // Custody counts: a task enters this node's custody when it is admitted here or read back from
    // the journal, and leaves it when it ends here or is handed back. Kept under the same lock as
    // the queues, so that accepted - finished = waiting + scheduled + running holds at every read.
    private long accepted;
    private long finished;
    // A task handed to a worker goes through up to three stages. Claimed: its claim is in flight or
    // it is leased and waits here for a slot (a local worker claims ahead, see #pollAhead). Running:
    // its handler runs (or a remote worker holds it). Finishing: its handler returned and its end is
    // being journaled; its slot is free, but it is not claimable and not finished until that commits.
    private int claimed;
    private int running;
    private int finishing;
    /** Tasks a local worker may hold claimed beyond its free slots; 0 for a remote queue. */
    private int ahead;
    // Slots taken by tasks whose claimed insert has not committed yet: not in custody until then.
    private int dispatching;
    // Tasks handed to the worker whose claim has not returned: still pending in the journal.
    private int claiming;

    public TaskQueue(QueueConfig config) {
        this.config = config;
        this.waitingOrder = order(config.agingPerSecond());
        this.waiting = new WaitingLine(waitingOrder, config.fairness().tenants(), config.fairness()::weight);
    }

    /**
     * Highest effective priority first; among equals, the task due first, then the older id. Written
     * out rather than composed from {@code Comparator.comparing...}: the composed lambdas are classes
     * the whole JVM shares, so their inner calls are megamorphic and were a tenth of the CPU of a
     * drain with a deep backlog (every poll walks the heap's height).
     */
    static Comparator<Task> order(double agingPerSecond) {
        return (a, b) -> {
            int byKey = Double.compare(agingKey(b, agingPerSecond), agingKey(a, agingPerSecond));
            return byKey != 0 ? byKey : dueFirst(a, b);
        };
    }

    /** The task due first, then the older id. */
    static int dueFirst(Task a, Task b) {
        int byDue = Long.compare(a.dueAtMillis(), b.dueAtMillis());
        return byDue != 0 ? byDue : a.id().compareTo(b.id());
    }

    static double agingKey(Task task, double agingPerSecond) {
        return task.priority() - agingPerSecond * (task.dueAtMillis() / 1000.0);
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
        this.workerId = workerId;
        this.leaseFor = leaseFor;
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
            if (paused == pause) {
                return;
            }
            paused = pause;
            listener = onAvailable;
        }
        listener.run();
    }

    public synchronized boolean paused() {
        return paused;
    }

    /** Recovery found more waiting tasks in the journal than this queue had room for. */
    public synchronized void journalHasMore(boolean more) {
        this.journalHasMore = more;
    }

    /** Why a reservation was refused. */
    public enum Refusal {
        QUEUE_FULL,
        SCHEDULED_FULL,
        TENANT_LIMIT
    }

    /**
     * Takes room for tasks of {@code tenant} (null: none) about to be journaled, all or none: tasks
     * due after {@code now} in the scheduled set, the others with the worker when nothing waits (they
     * must not overtake anyone; they are journaled claimed and start without a claim of their own),
     * as many as its free slots and claims ahead take, best first, and the rest in the waiting room.
     * Waiting (with claimed ahead) plus reserved never exceeds capacity, scheduled plus
     * reserved never the scheduled capacity, one tenant's unfinished and reserved tasks never its
     * limit. The caller journals {@link Reservation#inserts()}, then commits or aborts.
     */
    public Reservation reserve(List<Insert> tasks, String tenant, Instant now) {
        List<Insert> later = new ArrayList<>();
        List<Insert> due = new ArrayList<>();
        for (Insert task : tasks) {
            (task.runAt().isAfter(now) ? later : due).add(task);
        }
        // A gated task (a bounded key, a rate limit) is never journaled claimed at admission: its room
        // across nodes is decided by the claim (claim_gated), so it waits in line for one. Nor is a task
        // with a deadline: the insert is stamped when its group goes out, which may be after the
        // deadline that admission checked, and only a claim checks it against its own time.
        List<Insert> dispatchable = due;
        if (config.keyLimits().any() || config.rateLimit() != null || anyDeadline(due)) {
            dispatchable = new ArrayList<>(due.size());
            for (Insert task : due) {
                if (!gated(task.task()) && task.startBy() == null) {
                    dispatchable.add(task);
                }
            }
        }
        int dispatch = 0;
        String worker;
        Duration lease;
        synchronized (this) {
            if (!tenantFits(tenant, tasks.size())) {
                return new Reservation(Refusal.TENANT_LIMIT, tenant, tasks.size());
            }
            if (!later.isEmpty() && scheduled.size() + reservedScheduled + later.size() > config.scheduledCapacity()) {
                return new Reservation(Refusal.SCHEDULED_FULL, tenant, later.size());
            }
            if (!due.isEmpty() && workerId != null && waiting.isEmpty() && !startsHeld()) {
                int room = Math.max(0, claimRoom());
                // A local worker takes what fits (the best first) and the rest wait behind it; a remote
                // waiter takes the whole submission or none of it.
                dispatch = config.remote()
                        ? (dispatchable.size() == due.size() && due.size() <= room ? due.size() : 0)
                        : Math.min(dispatchable.size(), room);
            }
            // Tasks dispatched beyond the free slots are claimed ahead: they take waiting room as those
            // that wait do.
            int beyondSlots = Math.max(0, claimed + running + dispatching + dispatch - config.slots());
            if (!due.isEmpty()
                    && waiting.size() + aside + reserved + (due.size() - dispatch) + beyondSlots > config.capacity()) {
                return new Reservation(Refusal.QUEUE_FULL, tenant, due.size());
            }
            reservedScheduled += later.size();
            dispatching += dispatch;
            reserved += due.size() - dispatch;
            for (Insert task : tasks) {
                hold(task.task().id(), tenant);
            }
            worker = workerId;
            lease = leaseFor;
        }
        // Outside the lock, which the worker takes for every task it starts and ends.
        Set<Insert> toWorker = Collections.newSetFromMap(new IdentityHashMap<>());
        if (dispatch == dispatchable.size()) {
            toWorker.addAll(dispatchable);
        } else if (dispatch > 0) {
            dispatchable.sort(Comparator.comparing(Insert::task, waitingOrder));
            toWorker.addAll(dispatchable.subList(0, dispatch));
        }
        List<Insert> inserts = new ArrayList<>(tasks.size());
        Instant leaseUntil = dispatch > 0 ? now.plus(lease) : null;
        for (Insert task : tasks) {
            inserts.add(toWorker.contains(task) ? task.claimedBy(worker, leaseUntil) : task);
        }
        return new Reservation(tenant, inserts, now, later.size(), due.size() - dispatch, dispatch);
    }

    private static boolean anyDeadline(List<Insert> tasks) {
        for (Insert task : tasks) {
            if (task.startBy() != null) {
                return true;
            }
        }
        return false;
    }

    /**
     * Room taken by {@link #reserve}, or the reason there was none. Exactly one of {@link #commit}
     * and {@link #abort} must follow a reservation that was made.
     */
    public final class Reservation {
        private final Refusal refusal;
        private final String tenant;
        private final List<Insert> inserts;
        private final int scheduledCount;
        private final int waitingCount;
        private final int dispatchedCount;
        private final Instant now;
        private final int refused;
        private boolean settled;

        private Reservation(Refusal refusal, String tenant, int refused) {
            this.refused = refused;
            this.now = null;
            this.refusal = refusal;
            this.tenant = tenant;
            this.inserts = List.of();
            this.scheduledCount = 0;
            this.waitingCount = 0;
            this.dispatchedCount = 0;
            this.settled = true;
        }

        private Reservation(
                String tenant,
                List<Insert> inserts,
                Instant now,
                int scheduledCount,
                int waitingCount,
                int dispatchedCount) {
            this.now = now;
            this.refused = 0;
            this.refusal = null;
            this.tenant = tenant;
            this.inserts = List.copyOf(inserts);
            this.scheduledCount = scheduledCount;
            this.waitingCount = waitingCount;
            this.dispatchedCount = dispatchedCount;
        }

        /** Null when room was taken; else why not (nothing was taken). */
        public Refusal refusal() {
            return refusal;
        }

        /** How many of the tasks the refused room was asked for: those due later, those due now, or all (tenant). */
        public int refused() {
            return refused;
        }

        public TaskQueue queue() {
            return TaskQueue.this;
        }

        public String tenant() {
            return tenant;
        }

        /** The tasks as they go into the journal, in the order given: claimed where they were dispatched. */
        public List<Insert> inserts() {
            return inserts;
        }

        /** The tasks are journaled: they wait for their time, for a worker, or run at once. */
        public void commit() {
            Runnable available = null;
            Runnable onSched = null;
            List<Dispatched> started = new ArrayList<>(dispatchedCount);
            for (Insert insert : inserts) {
                if (insert.claimed()) {
                    started.add(new Dispatched(insert.journaledTask(), insert.lease()));
                }
            }
            synchronized (TaskQueue.this) {
                settle();
                accepted += inserts.size();
                reservedScheduled -= scheduledCount;
                reserved -= waitingCount;
                dispatching -= dispatchedCount;
                if (config.remote()) {
                    running += dispatchedCount;
                } else {
                    claimed += dispatchedCount;
                }
                ready.addAll(started);
                if (waitingCount + scheduledCount > 0) {
                    for (Insert insert : inserts) {
                        if (insert.claimed()) {
                            continue;
                        }
                        if (insert.runAt().isAfter(now)) {
                            scheduled.add(insert.task());
                        } else {
                            line(insert.task());
                        }
                    }
                }
                if (waitingCount + dispatchedCount > 0) {
                    available = onAvailable;
                }
                if (scheduledCount > 0) {
                    onSched = onScheduled;
                }
            }
            if (available != null) {
                available.run();
            }
            if (onSched != null) {
                onSched.run();
            }
        }

        /** The journal refused the tasks or inserted none: give the room back. */
        public void abort() {
            synchronized (TaskQueue.this) {
                settle();
                reservedScheduled -= scheduledCount;
                reserved -= waitingCount;
                dispatching -= dispatchedCount;
                for (Insert insert : inserts) {
                    release(insert.task().id());
                }
            }
        }

        private void settle() {
            if (settled) {
                throw new IllegalStateException(
                        refusal != null
                                ? "a refused reservation holds nothing"
                                : "a reservation is committed or aborted once");
            }
            settled = true;
        }
    }

    /** The next task admitted straight to a slot, already running and leased, or null. */
    public synchronized Dispatched pollDispatched() {
        return ready.poll();
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
        synchronized (this) {
            leave(stage);
            available = back(task.id()) ? onAvailable : null;
            kept = scheduled.size() + reservedScheduled < config.scheduledCapacity();
            if (kept) {
                scheduled.add(task);
            } else {
                finished++;
                release(task.id());
            }
            listener = kept ? onScheduled : null;
        }
        if (available != null) {
            available.run();
        }
        if (listener != null) {
            listener.run();
        }
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
        synchronized (this) {
            leave(stage);
            finished++;
            release(id);
            available = back(id) ? onAvailable : null;
            listener = stage == Stage.CLAIMED ? roomSignal() : null;
        }
        if (available != null) {
            available.run();
        }
        if (listener != null) {
            listener.run();
        }
    }

    /** Where a task handed to a worker stands; see the fields' comment. */
    public enum Stage {
        CLAIMED,
        RUNNING,
        FINISHING
    }

    private void leave(Stage stage) {
        switch (stage) {
            case CLAIMED -> claimed--;
            case RUNNING -> running--;
            case FINISHING -> finishing--;
        }
    }

    /** A local worker started the handler of a task it held claimed. */
    public synchronized void started() {
        claimed--;
        running++;
    }

    /** A local worker's handler returned; the task's end is being journaled and its slot is free. */
    public void returned() {
        Runnable listener;
        synchronized (this) {
            running--;
            finishing++;
            // A task claimed ahead took this slot's place in the count: that room is free now.
            listener = roomSignal();
        }
        listener.run();
    }

    /** What to tell recovery when the queue has fallen to half while the journal holds more: nothing else. */
    private Runnable roomSignal() {
        if (journalHasMore && occupied() <= config.capacity() / 2) {
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
        this.ahead = config.remote() ? 0 : Math.max(0, tasks);
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
            int want = startsHeld() ? 0 : Math.min(max, claimRoom());
            // A gated task (a bounded key, a rate limit) is claimed only into a free slot, never ahead: its
            // room is shared by every node, and a task leased here while it waits for a slot would hold
            // that room from a node that could run it now. Nothing is claimed ahead of it either, or a
            // steady stream of other tasks would keep the slots it waits for always spoken for. Likewise a
            // task that must start by a deadline: its claim is its start, and leased ahead it could wait
            // past the deadline for a slot, behind handlers slower than the ones that set the claims ahead.
            int free = freeSlots();
            while (taken.size() < want && !waiting.isEmpty()) {
                Task next = waiting.peek();
                if (taken.size() >= free && (gated(next) || next.deadlineHolds())) {
                    break;
                }
                taken.add(out(waiting.poll()));
            }
            claimed += taken.size();
            claiming += taken.size();
            listener = taken.isEmpty() ? null : roomSignal();
        }
        if (listener != null) {
            listener.run();
        }
        return taken;
    }

    /**
     * Moves scheduled tasks that are due at {@code nowMillis} to waiting, as far as waiting has room.
     * Returns how many moved.
     */
    public int promoteDue(long nowMillis) {
        int moved = 0;
        Runnable listener;
        synchronized (this) {
            while (!scheduled.isEmpty()
                    && scheduled.peek().dueAtMillis() <= nowMillis
                    && occupied() < config.capacity()) {
                line(scheduled.poll());
                moved++;
            }
            listener = onAvailable;
        }
        if (moved > 0) {
            listener.run();
        }
        return moved;
    }

    /** When the earliest scheduled task is due, or {@link Long#MAX_VALUE} when none is scheduled. */
    public synchronized long nextDueMillis() {
        return scheduled.isEmpty() ? Long.MAX_VALUE : scheduled.peek().dueAtMillis();
    }

    /**
     * Adds tasks read back from the journal (start-up, page-in), skipping any this node already
     * holds and any beyond capacity. Returns how many were added.
     */
    public int offer(List<Task> tasks) {
        int added = 0;
        Runnable listener;
        synchronized (this) {
            for (Task task : tasks) {
                if (occupied() >= config.capacity()) {
                    break;
                }
                if (hold(task.id(), task.tenant())) {
                    line(task);
                    added++;
                }
            }
            accepted += added;
            listener = onAvailable;
        }
        if (added > 0) {
            listener.run();
        }
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
            task = !startsHeld() && freeSlots() > 0 ? out(waiting.poll()) : null;
            if (task != null) {
                running++;
                claiming++;
                listener = roomSignal();
            }
        }
        if (listener != null) {
            listener.run();
        }
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
        Runnable listener = null;
        synchronized (this) {
            int want = Math.min(max, freeSlots());
            if (startsHeld() || want <= 0 || waiting.isEmpty()) {
                return List.of();
            }
            // One pass over the heap keeps the best few that match (the worst of them on top), instead
            // of draining the heap past the types the worker does not run and refilling it.
            PriorityQueue<Task> best = new PriorityQueue<>(want + 1, waitingOrder.reversed());
            for (Task task : waiting) {
                if (takes.test(task)) {
                    best.add(task);
                    if (best.size() > want) {
                        best.poll();
                    }
                }
            }
            if (best.isEmpty()) {
                return List.of();
            }
            taken = new ArrayList<>(best);
            taken.sort(waitingOrder);
            Set<Task> chosen = Collections.newSetFromMap(new IdentityHashMap<>());
            chosen.addAll(taken);
            waiting.removeIf(chosen::contains);
            taken.forEach(this::out);
            running += taken.size();
            claiming += taken.size();
            listener = roomSignal();
        }
        if (listener != null) {
            listener.run();
        }
        return taken;
    }

    /** Whether {@link #poll} could hand out a task now: one waits and a slot is free. */
    public synchronized boolean canPoll() {
        return !startsHeld() && !waiting.isEmpty() && freeSlots() > 0;
    }

    /**
     * Drops a task from waiting or scheduled (it was cancelled). True when it was there; a task
     * already running is not affected.
     */
    public boolean remove(UUID id) {
        boolean removed;
        Runnable available = null;
        synchronized (this) {
            if (!held.containsKey(id)) {
                return false; // not in this node's custody (the deadline sweep asks of every node's tasks)
            }
            Task found = null;
            for (Task task : waiting) {
                if (task.id().equals(id)) {
                    found = task;
                    break;
                }
            }
            removed = found != null && waiting.remove(found);
            // Its key's next task takes its place in line: the worker is told, to claim it.
            String key = removed ? gateKey(found) : null;
            if (key != null) {
                count(keyInLine, key, -1);
                available = refill(key) ? onAvailable : null;
            }
            removed = removed || scheduled.removeIf(t -> t.id().equals(id)) || removeAside(id);
            if (removed) {
                release(id);
                finished++;
            }
        }
        if (available != null) {
            available.run();
        }
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
        int free = freeSlots();
        int[] before = waiting.startsBefore(probe, peers);
        for (int i = 0; i < before.length; i++) {
            before[i] += Math.max(0, -free);
        }
        return new Outlook(paused, Math.max(0, free), before);
    }

    /** See {@link #outlook}; {@code startsBefore} has one entry per peer count asked. */
    public record Outlook(boolean paused, int freeSlots, int[] startsBefore) {}

    /** One consistent reading of the custody counts. */
    public synchronized Counts counts() {
        return new Counts(
                accepted,
                finished,
                waiting.size() + aside + claimed,
                scheduled.size(),
                running + finishing,
                claimed,
                finishing);
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
        return waiting.size() + aside;
    }

    /** Tasks waiting aside because their concurrency key is at its bound (here, or on other nodes). */
    public synchronized int heldByKeys() {
        return aside - asideOfRateBlocked();
    }

    /** Tasks waiting because a rate budget is spent: all in line, when it is the queue's own; else its key's. */
    public synchronized int heldByRate() {
        return (rateHeld ? waiting.size() : 0) + asideOfRateBlocked();
    }

    /**
     * Of the tasks aside, those the rate limit holds: its key's budget was found spent, or under a
     * per-key limit its budget, not its concurrency bound, is what keeps its line short (see {@link
     * #lineBound}).
     */
    private int asideOfRateBlocked() {
        QueueConfig.RateLimit rate = config.rateLimit();
        if (rate == null || keyAside.isEmpty()) {
            return 0;
        }
        int n = 0;
        for (Map.Entry<String, PriorityQueue<Task>> side : keyAside.entrySet()) {
            String key = side.getKey();
            int bound = keyBound(key);
            if (rateBlocked.contains(key) || (rate.perKey() && (bound == 0 || rate.tasks() < bound))) {
                n += side.getValue().size();
            }
        }
        return n;
    }

    public synchronized int scheduled() {
        return scheduled.size();
    }

    /** Room left for new tasks: capacity less waiting, claimed ahead and reserved. */
    public synchronized int room() {
        return config.capacity() - occupied();
    }

    /**
     * The waiting room in use: tasks in line, those reserved for it, and those a local worker holds
     * claimed beyond its slots (they wait for a slot too, only leased already). So claiming ahead
     * never lets more tasks in than slots plus capacity.
     */
    private int occupied() {
        return waiting.size() + aside + reserved + aheadOfSlots();
    }

    /**
     * How many more tasks a local worker may take claimed: its slots and claims ahead, less what it
     * holds. Ends being journaled do not count: their slots are free, the worker keeps their leases
     * alive until they commit, and the claims they wait behind pace them. (Counted beyond the slots
     * and claims ahead, they held up 50-slot drains by a sixth: a busy journal has a few hundred ends
     * in flight as a rule.)
     */
    private int claimRoom() {
        return config.slots() + ahead - claimed - running - dispatching;
    }

    private int aheadOfSlots() {
        return Math.max(0, -freeSlots());
    }

    /** Slots no task holds: negative by as many as are claimed ahead of them. */
    private int freeSlots() {
        return config.slots() - claimed - running - dispatching;
    }

    /**
     * The worker's claim of {@code task} found its key full in the journal (other nodes run as many of
     * its tasks as the bound allows): the task is pending still and waits aside, and its key takes no
     * more claims until {@link #retryKey}. False, and nothing changed, when the queue did not hand
     * it out as a task of a bounded key (its bound was taken off meanwhile): the caller gives it back
     * as a lost claim.
     */
    public synchronized boolean keyFull(Task task, Stage stage) {
        String key = outKeyed.remove(task.id());
        if (key == null) {
            return false;
        }
        leave(stage);
        count(keyOut, key, -1);
        keyBlocked.add(key);
        putAside(key, task);
        return true;
    }

    /** A key found full in the journal may be tried again: its best tasks go back in line. */
    public void retryKey(String key) {
        Runnable listener;
        synchronized (this) {
            keyBlocked.remove(key);
            listener = refill(key) ? onAvailable : null;
        }
        if (listener != null) {
            listener.run();
        }
    }

    /**
     * The worker's claim of {@code task} found a rate budget spent (on this node or others): the task
     * is pending still and waits, for the queue's own budget with everything else in line (nothing is
     * handed out until {@link #liftRate}), for a key's own aside with its key's tasks. False, and
     * nothing changed, when the queue did not hand it out under a rate limit: the caller gives it back
     * as a lost claim.
     */
    public boolean rateFull(Task task, Stage stage) {
        QueueConfig.RateLimit rate = config.rateLimit();
        if (rate == null) {
            return false;
        }
        synchronized (this) {
            if (!held.containsKey(task.id())) {
                return false;
            }
            leave(stage);
            String key = outKeyed.remove(task.id());
            if (key != null) {
                count(keyOut, key, -1);
            }
            if (rate.perKey()) {
                String budget = gateKey(task);
                rateBlocked.add(budget);
                putAside(budget, task);
            } else {
                rateHeld = true;
                line(task);
            }
        }
        return true;
    }

    /** The rate budget {@code bucket} ({@link ClaimGate#bucket}) may have a start again: its tasks may be claimed. */
    public void liftRate(String bucket) {
        Runnable listener;
        synchronized (this) {
            boolean moved;
            if (config.rateLimit() != null && config.rateLimit().perKey()) {
                moved = rateBlocked.remove(bucket) && refill(bucket);
            } else {
                moved = rateHeld && !waiting.isEmpty();
                rateHeld = false;
            }
            listener = moved ? onAvailable : null;
        }
        if (listener != null) {
            listener.run();
        }
    }

    /**
     * What the journal must check before it starts {@code task} (its key's bound, its rate budget),
     * or null when its queue gates nothing and a plain claim will do.
     */
    public ClaimGate gate(Task task) {
        String key = task.concurrencyKey();
        int keyLimit = keyBound(key);
        QueueConfig.RateLimit rate = config.rateLimit();
        if (keyLimit == 0 && rate == null) {
            return null;
        }
        return rate == null
                ? new ClaimGate(name(), key, keyLimit, null, 0, 0)
                : new ClaimGate(
                        name(), key, keyLimit, rate.perKey() && key != null ? key : "", rate.tasks(), rate.perMs());
    }

    /** Whether {@code task}'s start is decided by a gated claim (see {@link #gate}). */
    private boolean gated(Task task) {
        return config.rateLimit() != null || keyBound(task.concurrencyKey()) > 0;
    }

    /** How many tasks of {@code key} may run at once; 0: not bounded (no key, "" included). */
    private int keyBound(String key) {
        return key == null || key.isEmpty() ? 0 : config.keyLimits().limit(key);
    }

    /** Whether nothing may be handed out now: paused by an operator, or the queue's rate budget spent. */
    private boolean startsHeld() {
        return paused || rateHeld;
    }

    /**
     * The key under which the queue tracks {@code task} (its in-line and out counts, its aside line),
     * or null for a task it need not track: its key when the key is bounded or has a rate budget of
     * its own, "" for a task without a key under a per-key rate limit (it has a budget of its own too).
     */
    private String gateKey(Task task) {
        String key = task.concurrencyKey();
        if (config.rateLimit() != null && config.rateLimit().perKey()) {
            return key == null ? "" : key;
        }
        return keyBound(key) > 0 ? key : null;
    }

    /** Puts a due task in line, or aside when its key is at its bound here or blocked. */
    private void line(Task task) {
        String key = gateKey(task);
        if (key == null) {
            waiting.add(task);
        } else if (keyHasRoom(key)) {
            waiting.add(task);
            count(keyInLine, key, 1);
        } else {
            putAside(key, task);
        }
    }

    /** Whether one more task of {@code key} may go in line: not blocked, and in line and out short of its bound (if any). */
    private boolean keyHasRoom(String key) {
        if (keyBlocked.contains(key) || rateBlocked.contains(key)) {
            return false;
        }
        int bound = lineBound(key);
        return bound == 0 || get(keyOut, key) + get(keyInLine, key) < bound;
    }

    /**
     * How many of a key's tasks may be in line or out at once (0: any number): its concurrency bound,
     * and under a per-key rate limit no more than its budget for a window, as more could only be
     * claimed to be refused (a lifted budget would otherwise send its whole backlog to be claimed).
     */
    private int lineBound(String key) {
        int bound = keyBound(key);
        QueueConfig.RateLimit rate = config.rateLimit();
        if (rate != null && rate.perKey()) {
            bound = bound == 0 ? rate.tasks() : Math.min(bound, rate.tasks());
        }
        return bound;
    }

    private void putAside(String key, Task task) {
        keyAside.computeIfAbsent(key, k -> new PriorityQueue<>(waitingOrder)).add(task);
        aside++;
    }

    /** A task taken out of waiting for a worker (null: none was): its key counts it until it comes back. */
    private Task out(Task task) {
        String key = task == null ? null : gateKey(task);
        if (key != null) {
            count(keyInLine, key, -1);
            count(keyOut, key, 1);
            outKeyed.put(task.id(), key);
        }
        return task;
    }

    /** A keyed task taken out of waiting came back or left: its key has room again. True when that put a task in line. */
    private boolean back(UUID id) {
        String key = outKeyed.remove(id);
        if (key == null) {
            return false;
        }
        count(keyOut, key, -1);
        return refill(key);
    }

    /** Moves the best tasks aside of {@code key} into line as far as its bound allows; true when any moved. */
    private boolean refill(String key) {
        PriorityQueue<Task> side = keyAside.get(key);
        boolean moved = false;
        while (side != null && !side.isEmpty() && keyHasRoom(key)) {
            waiting.add(side.poll());
            aside--;
            count(keyInLine, key, 1);
            moved = true;
        }
        if (side != null && side.isEmpty()) {
            keyAside.remove(key);
        }
        return moved;
    }

    private boolean removeAside(UUID id) {
        for (Map.Entry<String, PriorityQueue<Task>> side : keyAside.entrySet()) {
            if (side.getValue().removeIf(t -> t.id().equals(id))) {
                aside--;
                if (side.getValue().isEmpty()) {
                    keyAside.remove(side.getKey());
                }
                return true;
            }
        }
        return false;
    }

    private static int get(Map<String, Integer> counts, String key) {
        return counts.getOrDefault(key, 0);
    }

    private static void count(Map<String, Integer> counts, String key, int by) {
        counts.merge(key, by, (a, b) -> a + b == 0 ? null : a + b);
    }

    /** Every id this node holds, for page-in to skip. */
    public synchronized List<UUID> heldIds() {
        return new ArrayList<>(held.keySet());
    }

    /** Unfinished and reserved tasks of {@code tenant} in this queue. */
    public synchronized int tenantHeld(String tenant) {
        return byTenant.getOrDefault(tenant, 0);
    }

    private boolean tenantFits(String tenant, int wanted) {
        return tenant == null
                || config.tenantLimit() == 0
                || byTenant.getOrDefault(tenant, 0) + wanted <= config.tenantLimit();
    }

    private void hold(Collection<UUID> ids, String tenant) {
        for (UUID id : ids) {
            hold(id, tenant);
        }
    }

    /** Takes {@code id} into custody; false when it already was. */
    private boolean hold(UUID id, String tenant) {
        // One lookup: the map holds NO_TENANT rather than null, so that putIfAbsent tells the cases apart.
        if (held.putIfAbsent(id, tenant == null ? NO_TENANT : tenant) != null) {
            return false;
        }
        if (tenant != null) {
            byTenant.merge(tenant, 1, Integer::sum);
        }
        return true;
    }

    private void release(UUID id) {
        String tenant = held.remove(id);
        if (tenant != null && tenant != NO_TENANT) {
            byTenant.computeIfPresent(tenant, (t, n) -> n == 1 ? null : n - 1);
        }
    }

    /** The worker's claim of a polled task returned (taken or lost): it is no longer pending here. */
    public synchronized void claimReturned() {
        claiming--;
    }

    /**
     * How many of the tasks this node holds the journal shows as pending and due now: waiting,
     * scheduled and due, being claimed, or being inserted.
     */
    public synchronized int heldPending(long nowMillis) {
        int pending = waiting.size() + aside + claiming + reserved;
        for (Task task : scheduled) {
            if (task.dueAtMillis() <= nowMillis) {
                pending++;
            }
        }
        return pending;
    }

    /** How long the task first in line has waited, in ms at {@code nowMillis}; 0 when none wait. */
    public synchronized long oldestWaitingAgeMs(long nowMillis) {
        long oldest = Long.MAX_VALUE;
        for (Task task : waiting) {
            oldest = Math.min(oldest, task.dueAtMillis());
        }
        for (PriorityQueue<Task> side : keyAside.values()) {
            for (Task task : side) {
                oldest = Math.min(oldest, task.dueAtMillis());
            }
        }
        return oldest == Long.MAX_VALUE ? 0 : Math.max(0, nowMillis - oldest);
    }
}
