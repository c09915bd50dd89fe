package dev.taskline.schedule;

import dev.taskline.admission.Admission;
import dev.taskline.journal.JournalSchedules;
import dev.taskline.metrics.ScheduleMeters;
import dev.taskline.model.StoredSchedule;
import dev.taskline.model.TickWrite;
import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.UUID;
import java.util.logging.Level;
import java.util.logging.Logger;

/**
 * Evaluates every schedule's ticks on this node; every node runs one. Whichever node decides a tick
 * first (journals its task, or its skip) wins through the journal's key on schedule and tick, and
 * the others' writes change nothing (counted as lost races). So a tick fires once however many
 * nodes evaluate it, and keeps firing while any one of them runs.
 *
 * <p>A pass reads the journal (about once a second, or always from {@link #runOnce}), plans each
 * schedule's due ticks with {@link TickPlan}, and hands them to admission in one go: their tasks
 * take room in their queues like any submission, and the journal decides all of them in one
 * transaction. The next pass is timed for the next tick due, by the injected clock (at most
 * {@value #MAX_WAIT_MS} ms away, so that a moved clock or another node's change is seen soon).
 */
public final class Scheduler extends VerticleBase {

    private static final Logger LOG = Logger.getLogger(Scheduler.class.getName());
    /** Most ticks of one schedule fired in one pass; the rest go in the next ones. */
    static final int CHUNK = 100;

    static final long MAX_WAIT_MS = 250;
    static final long REFRESH_MS = 1000;
    /**
     * How long a node leaves a tick to the node that decided the schedule's last one, when that node
     * ranks above it for the schedule (see {@link #backup}). Every node racing for every tick at the
     * same instant doubles the work (each loser builds the task, takes room, and waits on the
     * winner's row lock to learn that it lost); a node that waits this long and then asks the journal
     * only decides what the other did not. Were the other gone, its ticks come this much later, once,
     * until this node has decided one.
     */
    static final Duration BACKUP_DELAY = Duration.ofMillis(200);
    /**
     * A pass this long after the last one that succeeded means the node was not there (its passes
     * stalled, or its journal did not answer): what came due meanwhile follows catchUp.
     */
    static final Duration STALL = Duration.ofSeconds(60);

    private final JournalSchedules journal;
    private final Admission admission;
    private final ScheduleMeters meters;
    private final Clock clock;
    private final String nodeId;
    private final Duration grace;
    private final int maxCatchUp;
    private final Map<UUID, State> states = new HashMap<>(); // guarded by this
    private final Set<String> unreadable = new HashSet<>(); // guarded by this: each is logged once
    private final Instant startedAt;
    private Future<Void> chain = Future.succeededFuture(); // guarded by this
    private Instant lastPass; // guarded by this
    private long lastRefreshNanos = Long.MIN_VALUE / 2;
    private long timer = -1;
    private volatile boolean stopped;
    private boolean failing;

    /** One schedule as this node evaluates it. */
    private static final class State {
        final UUID id;
        final String specJson;
        final ScheduleSpec spec;
        boolean paused;
        /** The newest tick decided, by any node as far as this one knows; no tick at or before it is decided again. */
        Instant cursor;
        /** Ticks up to here came while this node was not evaluating: they follow catchUp. Null: none. */
        Instant pastThrough;
        /** Not before then are the past ticks decided (see takeUp). */
        Instant catchUpAt;
        /** The node that decided the newest tick this one knows of; "" for another whose id is not read yet. */
        String lastDecider;
        // The first tick after nextFor (the cursor when it was computed): a cron's next tick costs tens
        // of microseconds, and most passes find most schedules with nothing due.
        private Instant nextFor;
        private Instant next;

        /** The first tick after the cursor; null when the cadence has none. */
        Instant next() {
            if (!cursor.equals(nextFor)) {
                next = spec.cadence().next(cursor);
                nextFor = cursor;
            }
            return next;
        }

        State(UUID id, String specJson, ScheduleSpec spec) {
            this.id = id;
            this.specJson = specJson;
            this.spec = spec;
        }
    }

    /**
     * @param grace how late a tick may be, when this node takes a schedule up (one made before it
     *              started, or after its passes stalled), and still be fired as live rather than
     *              follow the schedule's catchUp
     * @param maxCatchUp most missed ticks {@code catchUp: all} fires, the newest ones
     */
    public Scheduler(
            JournalSchedules journal,
            Admission admission,
            ScheduleMeters meters,
            Clock clock,
            String nodeId,
            Duration grace,
            int maxCatchUp) {
        this.journal = journal;
        this.admission = admission;
        this.meters = meters;
        this.clock = clock;
        this.nodeId = nodeId;
        this.grace = grace;
        this.maxCatchUp = maxCatchUp;
        this.startedAt = clock.instant();
    }

    @Override
    public Future<?> start() {
        // The first pass waits for a refresh, so that nothing is decided on an empty picture.
        schedule(0);
        return Future.succeededFuture();
    }

    @Override
    public Future<?> stop() {
        stopped = true;
        vertx.cancelTimer(timer);
        return Future.succeededFuture();
    }

    /** No pass after this one: the node is shutting down, and its ticks are the other nodes' to decide. */
    public void halt() {
        stopped = true;
    }

    /** Reads the journal, then decides every tick due by the clock; one pass at a time. */
    public Future<Void> runOnce() {
        return enqueue(true);
    }

    /** As {@link #runOnce}, with the journal read only if {@code refresh}: a pass between two reads, for tests. */
    Future<Void> runOnce(boolean refresh) {
        return enqueue(refresh);
    }

    /** The journal changed here (a schedule made, deleted, paused or resumed): read it before the next pass. */
    public synchronized void changed() {
        lastRefreshNanos = Long.MIN_VALUE / 2;
    }

    private void schedule(long delayMs) {
        if (stopped) {
            return;
        }
        timer = vertx.setTimer(Math.max(1, delayMs), id -> {
            if (stopped) {
                return;
            }
            boolean refresh;
            synchronized (this) {
                refresh = System.nanoTime() - lastRefreshNanos >= REFRESH_MS * 1_000_000;
            }
            enqueue(refresh).onComplete(done -> {
                if (done.failed() && !failing) {
                    LOG.log(
                            Level.WARNING,
                            "evaluating schedules failed; trying again every " + MAX_WAIT_MS + " ms: "
                                    + done.cause().getMessage());
                }
                failing = done.failed();
                schedule(done.failed() ? MAX_WAIT_MS : untilNextTick());
            });
        });
    }

    private synchronized Future<Void> enqueue(boolean refresh) {
        Future<Void> pass =
                chain.transform(ignored -> (refresh ? refresh() : Future.<Void>succeededFuture()).compose(v -> pass()));
        chain = pass.otherwiseEmpty().mapEmpty();
        return pass;
    }

    private Future<Void> refresh() {
        synchronized (this) {
            lastRefreshNanos = System.nanoTime();
        }
        return journal.cursors().map(rows -> {
            apply(rows, clock.instant());
            return null;
        });
    }

    private synchronized void apply(List<StoredSchedule> rows, Instant now) {
        Set<UUID> seen = new HashSet<>();
        Set<String> names = new HashSet<>();
        for (StoredSchedule row : rows) {
            seen.add(row.id());
            names.add(row.name());
            State state = states.get(row.id());
            if (state == null || !state.specJson.equals(row.spec())) {
                ScheduleSpec spec;
                try {
                    spec = ScheduleSpec.fromStored(row.name(), new JsonObject(row.spec()));
                } catch (RuntimeException e) {
                    // Written by a node of another version, say: this one leaves it to the nodes that read it.
                    if (unreadable.add(row.spec())) {
                        LOG.warning("schedule '" + row.name()
                                + "' cannot be read here, so this node does not evaluate it: " + e.getMessage());
                    }
                    states.remove(row.id());
                    continue;
                }
                state = new State(row.id(), row.spec(), spec);
                state.cursor = row.createdAt();
                states.put(row.id(), state);
                // A schedule made (or resumed) while this node ran has no ticks from a time it was away.
                Instant owedSince = row.paused() ? row.createdAt() : latest(row.createdAt(), row.changedAt());
                if (owedSince.isBefore(startedAt)) {
                    takeUp(state, now);
                }
            }
            state.paused = row.paused();
            if (row.lastTickAt() != null && !row.lastTickAt().isBefore(state.cursor)) {
                state.lastDecider = row.lastDecidedBy();
            }
            state.cursor = latest(state.cursor, row.lastTickAt());
            if (!row.paused()) {
                // No tick at or before a resume is owed: it came while the schedule was paused.
                state.cursor = latest(state.cursor, row.changedAt());
            }
        }
        states.keySet().retainAll(seen);
        // A tenant making and deleting schedules in a loop would otherwise grow the meters without end.
        meters.keepOnly(names);
        unreadable.retainAll(
                new HashSet<>(rows.stream().map(StoredSchedule::spec).toList()));
    }

    /**
     * This node takes the schedule up now: what came due more than the grace ago, and is not decided,
     * is past. Past ticks wait for a read of the journal at least a grace later: a node that was there
     * but slow (a loaded machine) has that long to decide them first, as its own.
     */
    private void takeUp(State state, Instant now) {
        state.pastThrough = now.minus(grace);
        state.catchUpAt = now.plus(grace).plusMillis(REFRESH_MS);
    }

    private Future<Void> pass() {
        Instant now = clock.instant();
        List<Admission.DueTick> due = new ArrayList<>();
        List<TickWrite> skips = new ArrayList<>();
        List<TickWrite.Tick> checks = new ArrayList<>();
        Map<UUID, String> names = new HashMap<>();
        synchronized (this) {
            // Since the last pass that decided what it had to: a node whose passes stalled, or whose
            // journal did not answer, that long was not there for the ticks meanwhile.
            if (lastPass != null && Duration.between(lastPass, now).compareTo(STALL) > 0) {
                states.values().forEach(s -> takeUp(s, now));
            }
            for (State s : states.values()) {
                if (s.paused) {
                    continue;
                }
                if (s.pastThrough != null) {
                    Instant newest = s.spec.cadence().previous(s.pastThrough.plusNanos(1));
                    if (newest == null || !newest.isAfter(s.cursor)) {
                        s.pastThrough = null; // caught up
                    }
                }
                boolean backup = backup(s);
                Instant until = backup ? now.minus(BACKUP_DELAY) : now;
                if (s.pastThrough == null && (s.next() == null || s.next().isAfter(until))) {
                    continue; // nothing due
                }
                if (s.pastThrough != null && now.isBefore(s.catchUpAt)) {
                    continue; // its live ticks wait too: deciding them would pass over the past ones
                }
                TickPlan plan = TickPlan.of(s.spec, s.cursor, s.pastThrough, until, maxCatchUp, CHUNK);
                if (plan.isEmpty()) {
                    continue;
                }
                names.put(s.id, s.spec.name());
                if (plan.missed() != null) {
                    skips.add(TickWrite.skip(
                            s.id, plan.missed(), "missed", missedDetail(s.spec, plan), plan.missedCount()));
                }
                for (Instant tick : plan.fire()) {
                    due.add(new Admission.DueTick(
                            s.id, s.spec.name(), tick, s.spec.task(), s.spec.overlap() == ScheduleSpec.Overlap.SKIP));
                    if (backup) {
                        checks.add(new TickWrite.Tick(s.id, tick));
                    }
                }
            }
        }
        if (checks.isEmpty()) {
            return decide(due, skips, names, now);
        }
        return journal.decided(checks).compose(decided -> {
            List<Admission.DueTick> left = new ArrayList<>(due.size());
            synchronized (this) {
                for (Admission.DueTick tick : due) {
                    if (decided.contains(new TickWrite.Tick(tick.scheduleId(), tick.tick()))) {
                        meters.lost(tick.schedule());
                        State s = states.get(tick.scheduleId());
                        if (s != null) {
                            s.cursor = latest(s.cursor, tick.tick());
                        }
                    } else {
                        left.add(tick);
                    }
                }
            }
            return decide(left, skips, names, now);
        });
    }

    /** Admits and decides the ticks due, then moves each schedule's cursor on by what became of them. */
    private Future<Void> decide(
            List<Admission.DueTick> due, List<TickWrite> skips, Map<UUID, String> names, Instant now) {
        if (due.isEmpty() && skips.isEmpty()) {
            synchronized (this) {
                lastPass = now;
            }
            return Future.succeededFuture();
        }
        return admission
                .admitTicks(due, skips, writes -> journal.decide(writes, nodeId))
                .map(decisions -> {
                    boolean gone = false;
                    synchronized (this) {
                        lastPass = now;
                        for (TickWrite.Decision decision : decisions) {
                            TickWrite write = decision.write();
                            State s = states.get(write.scheduleId());
                            String name = names.get(write.scheduleId());
                            switch (decision.outcome()) {
                                case FIRED -> meters.fired(name);
                                case SKIPPED -> meters.skipped(name, write.task() == null ? write.ticks() : 1);
                                case LOST -> meters.lost(name);
                                case GONE -> gone = true;
                            }
                            if (s != null && decision.outcome() != TickWrite.Outcome.GONE) {
                                s.cursor = latest(s.cursor, write.tickAt());
                                s.lastDecider = decision.outcome() == TickWrite.Outcome.LOST ? "" : nodeId;
                            }
                        }
                        if (gone) {
                            lastRefreshNanos = Long.MIN_VALUE / 2;
                        }
                    }
                    return null;
                });
    }

    /**
     * Whether this node leaves the schedule's next tick to another for {@link #BACKUP_DELAY}: the
     * last tick was decided by a node that ranks above this one for the schedule (or by one whose
     * id it has not read yet). The ranks (a hash of schedule and node) spread the schedules over the
     * nodes that decide them, rather than leave them all to whichever node was quickest once.
     */
    private boolean backup(State s) {
        return s.lastDecider != null
                && !s.lastDecider.equals(nodeId)
                && (s.lastDecider.isEmpty() || rank(s.id, s.lastDecider) > rank(s.id, nodeId));
    }

    /** Node {@code node}'s rank for schedule {@code schedule}: the same on every node (String.hashCode is specified). */
    static long rank(UUID schedule, String node) {
        long h = (schedule.toString() + '/' + node).hashCode() * 0x9E3779B97F4A7C15L;
        h ^= h >>> 31;
        h *= 0xBF58476D1CE4E5B9L;
        return h ^ (h >>> 29);
    }

    private static String missedDetail(ScheduleSpec spec, TickPlan plan) {
        String count = (plan.countCapped() ? "at least " : "") + plan.missedCount();
        return count + (plan.missedCount() == 1 ? " tick" : " ticks") + " from " + plan.missedFirst() + " to "
                + plan.missed() + " came while no node evaluated the schedule (catchUp: "
                + spec.catchUp().label() + ")";
    }

    /** Until the soonest tick of a running schedule, by the clock; at most {@value #MAX_WAIT_MS} ms. */
    private synchronized long untilNextTick() {
        Instant now = clock.instant();
        long wait = MAX_WAIT_MS;
        for (State s : states.values()) {
            if (s.paused) {
                continue;
            }
            Instant next = s.pastThrough != null && s.catchUpAt.isAfter(now)
                    ? s.catchUpAt
                    : backup(s) && s.next() != null ? s.next().plus(BACKUP_DELAY) : s.next();
            if (next != null) {
                wait = Math.min(wait, Duration.between(now, next).toMillis() + 1);
            }
        }
        return Math.max(1, wait);
    }

    private static Instant latest(Instant a, Instant b) {
        return b == null || (a != null && !b.isAfter(a)) ? a : b;
    }
}
