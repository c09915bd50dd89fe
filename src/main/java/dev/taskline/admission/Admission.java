package dev.taskline.admission;

import dev.taskline.config.QueueConfig;
import dev.taskline.config.TasklineConfig;
import dev.taskline.handler.HandlerRegistry;
import dev.taskline.handler.InvalidPayloadException;
import dev.taskline.handler.TaskHandler;
import dev.taskline.journal.Journal;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.metrics.TasklineMetrics;
import dev.taskline.model.IdempotentAnswer;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import dev.taskline.model.TickWrite;
import dev.taskline.model.problem.DeadlineUnmeetableException;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.JournalBusyException;
import dev.taskline.model.problem.QueueFullException;
import dev.taskline.model.problem.ShuttingDownException;
import dev.taskline.model.problem.TenantLimitException;
import dev.taskline.queue.NodeQueues;
import dev.taskline.queue.QueueRoom;
import dev.taskline.queue.Reservation;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.temporal.ChronoUnit;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.Function;
import java.util.function.IntFunction;
import java.util.function.Predicate;
import java.util.regex.Pattern;

/**
 * Says yes or no to every submission. Yes means: every rule holds, the queues had room (reserved
 * before the insert so that concurrent submissions cannot overshoot), and the insert committed.
 * Only then does the caller answer 202. No means nothing was journaled.
 *
 * <p>Its doors: {@link #submit}, {@link #submitBatch} and {@link #submitTriggered} (a caller's or a
 * trigger's tasks, under an Idempotency-Key when given, see {@link Idempotency}); {@link #admitFlow}
 * (a flow's tasks, its roots taking room); {@link #admitTicks} (schedules' ticks, each refused alone
 * as a skipped tick rather than failing the others); {@link #spawned} and {@link #check} (a task
 * checked and built, taking no room). Every door builds its tasks through one {@code build}, each at
 * its {@link Placement}; the first two take room and journal through one {@code reserveAndInsert}.
 */
public final class Admission {

    public static final int MIN_PRIORITY = -1000;
    public static final int MAX_PRIORITY = 1000;
    public static final int MAX_ATTEMPTS = 100;
    public static final long MAX_TIMEOUT_MS = 24L * 3600 * 1000;
    /** The longest delay or deadline a task may be given: the one horizon of {@link dev.taskline.model.Instants}. */
    public static final long MAX_DELAY_MS = dev.taskline.model.Instants.MAX_AHEAD_MS;
    /** A tenant name: what a caller's own account or customer ids look like, nothing that needs escaping. */
    static final Pattern TENANT = Pattern.compile("[A-Za-z0-9._:@-]{1,128}");
    /** An answer journaled its tasks unless it is a replay: then an earlier request had, and the room goes back. */
    private static final Predicate<Admitted> JOURNALED = admitted -> !admitted.replayed();

    private final TasklineConfig config;
    private final NodeQueues<? extends QueueRoom> queues;
    private final HandlerRegistry handlers;
    private final Journal journal;
    private final TasklineMetrics metrics;
    private final Clock clock;
    private final StartsInTime startsInTime;
    private final Idempotency idempotency;
    private volatile boolean draining;

    public Admission(
            TasklineConfig config,
            NodeQueues<? extends QueueRoom> queues,
            HandlerRegistry handlers,
            Journal journal,
            TasklineMetrics metrics,
            Clock clock) {
        this.config = config;
        this.queues = queues;
        this.handlers = handlers;
        this.journal = journal;
        this.metrics = metrics;
        this.clock = clock;
        this.startsInTime = new StartsInTime(queues, metrics);
        this.idempotency = new Idempotency(Duration.ofMillis(config.retention().idempotencyKeyTtlMs()));
    }

    /** From now on every submission is refused with {@link ShuttingDownException}. */
    public void drain() {
        draining = true;
    }

    public boolean draining() {
        return draining;
    }

    /** What an Idempotency-Key gets here, for every door that takes one (flows' too). */
    public Idempotency idempotency() {
        return idempotency;
    }

    /** Admits one task; {@code idempotencyKey} and {@code tenant} may be null. */
    public Future<Admitted> submit(Submission submission, String idempotencyKey, String tenant) {
        return admit(List.of(submission), false, Idempotency.Kind.TASKS, idempotencyKey, tenant);
    }

    /**
     * Admits the task a trigger starts for an event, under a key of the node's making ({@code
     * key}, null: none) kept apart from every key a caller gives.
     */
    public Future<Admitted> submitTriggered(Submission submission, String key, String tenant) {
        return admit(List.of(submission), false, Idempotency.Kind.TRIGGER, key, tenant);
    }

    /** Admits a batch, all or nothing; {@code idempotencyKey} and {@code tenant} may be null. */
    public Future<Admitted> submitBatch(List<Submission> submissions, String idempotencyKey, String tenant) {
        int max = config.http().maxBatchSize();
        if (submissions.isEmpty()) {
            return Future.failedFuture(new InvalidTaskException("a batch needs at least one task"));
        }
        if (submissions.size() > max) {
            return Future.failedFuture(
                    new InvalidTaskException("a batch may hold at most " + max + " tasks, got " + submissions.size()));
        }
        return admit(submissions, true, Idempotency.Kind.TASKS, idempotencyKey, tenant);
    }

    private Future<Admitted> admit(
            List<Submission> submissions, boolean batch, Idempotency.Kind kind, String key, String tenant) {
        if (draining) {
            QueueRoom queue = queues.get(
                    submissions.get(0).queue() == null
                            ? TasklineConfig.DEFAULT_QUEUE
                            : submissions.get(0).queue());
            if (queue != null) {
                metrics.queue(queue.name()).rejectedShuttingDown(submissions.size());
            }
            return Future.failedFuture(new ShuttingDownException());
        }
        List<Insert> tasks;
        try {
            if (kind == Idempotency.Kind.TASKS) {
                Idempotency.check(key);
            }
            checkTenant(tenant);
            tasks = validate(submissions, batch ? Placement.batch(TaskIds.next(clock)) : Placement.ALONE, tenant);
            if (tenant != null) {
                withinTenantLimits(tasks);
            }
        } catch (InvalidTaskException e) {
            return Future.failedFuture(e);
        }
        UUID batchId = tasks.get(0).task().batchId();
        if (key == null) {
            return reserveAndInsert(
                    tasks,
                    tasks,
                    tenant,
                    inserts -> journal.insert(inserts).map(v -> new Admitted(batchId, inserts, false)),
                    JOURNALED);
        }
        Idempotency.Keyed keyed =
                idempotency.keyed(kind, tenant, key, batch ? "batch" : "task", canonical(submissions));
        return keyed.answer(
                journalKey -> journal.idempotentAnswer(journalKey).map(Admission::earlier),
                () -> reserveAndInsert(
                        tasks,
                        tasks,
                        tenant,
                        inserts -> journal.insertIdempotent(
                                        keyed.journalKey(), keyed.requestHash(), inserts, keyed.keepFor())
                                .map(lost -> lost == null
                                        ? new Admitted(batchId, inserts, false)
                                        : keyed.replay(earlier(lost))),
                        JOURNALED));
    }

    /** What a task key's first request left, as {@link Idempotency} compares it; null: nothing. */
    private static Idempotency.Earlier<Admitted> earlier(IdempotentAnswer stored) {
        return stored == null
                ? null
                : new Idempotency.Earlier<>(stored.requestHash(), new Admitted(stored.batchId(), stored.tasks(), true));
    }

    private static void checkTenant(String tenant) {
        if (tenant != null && !TENANT.matcher(tenant).matches()) {
            throw new InvalidTaskException(
                    "Taskline-Tenant must be 1 to 128 letters, digits, '.', '_', ':', '@' or '-'");
        }
    }

    /**
     * A task a running flow task spawns, checked as any task is ({@code where} before the field a
     * refusal names) and built as it will be journaled, at its {@code place} in the flow; it takes no
     * room: it waits blocked for its spawner, and queues hold it once it may run.
     *
     * @throws InvalidTaskException naming the field
     */
    public Insert spawned(Submission submission, String where, String tenant, Placement place) {
        return build(submission, where, tenant, place, clock.instant());
    }

    /**
     * Spawned tasks of {@code tenant} (null: none) fit their queues' tenant limits as a flow's
     * blocked tasks do: counted with the tenant's unfinished tasks there, blocked ones included.
     *
     * @throws InvalidTaskException when they could never fit
     * @throws TenantLimitException when they do not fit now
     */
    public void fitSpawned(List<Insert> spawned, String tenant) {
        if (tenant != null) {
            withinTenantLimits(spawned);
            flowWithinTenantRoom(spawned, tenant);
        }
    }

    /**
     * Admits a flow's tasks, all or nothing, each checked as any task is ({@code where} names task
     * {@code i} in a refusal) and placed at {@code places[i]} in the flow. The roots (no parents) take
     * room in their queues as a batch does, and may be dispatched at once; the others take none: they
     * wait blocked in the journal, in no queue, until their parents let them go. {@code insert}
     * journals them all, in order, the roots as reserved, and gives the answer; the room stays taken
     * when the answer is {@code journaled}, else goes back.
     */
    public <A> Future<A> admitFlow(
            List<Submission> submissions,
            List<Placement> places,
            String tenant,
            IntFunction<String> where,
            Function<List<Insert>, Future<A>> insert,
            Predicate<A> journaled) {
        if (draining) {
            return Future.failedFuture(new ShuttingDownException());
        }
        List<Insert> all = new ArrayList<>(submissions.size());
        List<Insert> roots = new ArrayList<>();
        try {
            checkTenant(tenant);
            Instant now = clock.instant();
            for (int i = 0; i < submissions.size(); i++) {
                Insert task = build(submissions.get(i), where.apply(i), tenant, places.get(i), now);
                all.add(task);
                if (!places.get(i).hasParents()) {
                    roots.add(task);
                }
            }
            if (tenant != null) {
                // Blocked tasks count against a tenant's limit in their queue as waiting ones do.
                withinTenantLimits(all);
                flowWithinTenantRoom(all, tenant);
            }
        } catch (InvalidTaskException | TenantLimitException e) {
            return Future.failedFuture(e);
        }
        return reserveAndInsert(all, roots, tenant, insert, journaled);
    }

    /**
     * The one way tasks are journaled: checks the deadlines of {@code reserved} (all of {@code all},
     * or a flow's roots), reserves room for them in their queues, runs {@code insert} with {@code
     * all} as they will be journaled (the reserved as their reservations made them), then commits the
     * reservations (when its answer is {@code journaled}) or aborts them (when it failed, or answered
     * with an earlier request's tasks). The future holds the answer.
     */
    private <A> Future<A> reserveAndInsert(
            List<Insert> all,
            List<Insert> reserved,
            String tenant,
            Function<List<Insert>, Future<A>> insert,
            Predicate<A> journaled) {
        Instant now = clock.instant();
        try {
            deadlinesAhead(reserved, now);
            startsInTime.check(reserved, now);
        } catch (InvalidTaskException | DeadlineUnmeetableException e) {
            return Future.failedFuture(e);
        }
        Map<String, List<Insert>> byQueue = new LinkedHashMap<>();
        for (Insert task : reserved) {
            byQueue.computeIfAbsent(task.task().queue(), k -> new ArrayList<>()).add(task);
        }
        List<Reservation> made = new ArrayList<>();
        Map<UUID, Insert> reservedAs = new HashMap<>();
        for (List<Insert> group : byQueue.values()) {
            Reservation reservation = queues.get(group.get(0).task().queue()).reserve(group, tenant, now);
            if (reservation.refusal() != null) {
                made.forEach(Reservation::abort);
                return Future.failedFuture(refused(reservation, reserved.size()));
            }
            made.add(reservation);
            reservation.inserts().forEach(i -> reservedAs.put(i.task().id(), i));
        }
        List<Insert> inserts = new ArrayList<>(all.size());
        for (Insert task : all) {
            inserts.add(reservedAs.getOrDefault(task.task().id(), task));
        }
        // Through compose, so that an insert that throws still gives the room back.
        return Future.succeededFuture(inserts)
                .compose(insert)
                .onFailure(e -> {
                    made.forEach(Reservation::abort);
                    if (e instanceof JournalBusyException) {
                        made.forEach(r -> metrics.queue(r.queue().name())
                                .rejectedJournalBusy(r.inserts().size()));
                    }
                })
                .map(answer -> {
                    boolean inserted = journaled.test(answer);
                    made.forEach(reservation -> settle(reservation, inserted));
                    return answer;
                });
    }

    /** The room a reservation took becomes its tasks' ({@code journaled}: accepted) or is given back. */
    private void settle(Reservation reservation, boolean journaled) {
        if (journaled) {
            reservation.commit();
            metrics.queue(reservation.queue().name())
                    .accepted(reservation.inserts().size());
        } else {
            reservation.abort();
        }
    }

    /** The submissions as canonical JSON, for their request's fingerprint. */
    private static String canonical(List<Submission> submissions) {
        JsonArray canonical = new JsonArray();
        for (Submission submission : submissions) {
            canonical.add(submission.canonical());
        }
        return canonical.encode();
    }

    private TenantLimitException tenantLimitReached(QueueRoom queue, String tenant, int wanted, int total) {
        QueueMeters meters = metrics.queue(queue.name());
        meters.rejectedTenantLimit(total);
        // The tenant's tasks wait in line with everyone else's, so one of them may end only when the
        // work ahead of it is done: the queue's whole backlog at its completion rate, as for a full queue.
        QueueRoom.Counts counts = queue.counts();
        return new TenantLimitException(
                queue.name(),
                tenant,
                queue.config().tenantLimit(),
                queue.tenantHeld(tenant),
                wanted,
                RetryAfter.seconds(counts.waiting() + counts.running(), meters.completionRate()));
    }

    /**
     * A flow's tasks of a queue with a tenant limit, its blocked ones too, fit beside the tenant's
     * unfinished tasks there (blocked ones included); the roots are checked again as they take room.
     */
    private void flowWithinTenantRoom(List<Insert> all, String tenant) {
        Map<String, Integer> perQueue = new LinkedHashMap<>();
        for (Insert task : all) {
            perQueue.merge(task.task().queue(), 1, Integer::sum);
        }
        perQueue.forEach((name, n) -> {
            QueueRoom queue = queues.get(name);
            int limit = queue.config().tenantLimit();
            if (limit > 0 && queue.tenantHeld(tenant) + n > limit) {
                throw tenantLimitReached(queue, tenant, n, all.size());
            }
        });
    }

    private RuntimeException refused(Reservation reservation, int total) {
        QueueRoom queue = reservation.queue();
        int wanted = reservation.refused();
        QueueMeters meters = metrics.queue(queue.name());
        switch (reservation.refusal()) {
            case TENANT_LIMIT -> {
                return tenantLimitReached(queue, reservation.tenant(), wanted, total);
            }
            case SCHEDULED_FULL -> {
                meters.rejectedScheduledFull(total);
                return new QueueFullException(
                        queue.name(),
                        queue.config().scheduledCapacity(),
                        queue.scheduled(),
                        wanted,
                        RetryAfter.seconds(queue.scheduled(), meters.completionRate()),
                        true);
            }
            default -> {
                meters.rejectedFull(total);
                int capacity = queue.config().capacity();
                int backlog = capacity - queue.room();
                return new QueueFullException(
                        queue.name(), capacity, backlog, wanted, RetryAfter.seconds(backlog, meters.completionRate()));
            }
        }
    }

    /** A request with more tasks for one queue than its tenant limit could never be admitted: 422, not 429. */
    private void withinTenantLimits(List<Insert> tasks) {
        Map<String, Integer> perQueue = new LinkedHashMap<>();
        for (Insert task : tasks) {
            perQueue.merge(task.task().queue(), 1, Integer::sum);
        }
        perQueue.forEach((name, n) -> {
            int limit = queues.get(name).config().tenantLimit();
            if (limit > 0 && n > limit) {
                throw new InvalidTaskException("queue '" + name + "' holds at most " + limit
                        + " unfinished tasks of one tenant, and this request has " + n + " for it");
            }
        });
    }

    private List<Insert> validate(List<Submission> submissions, Placement place, String tenant) {
        List<Insert> tasks = new ArrayList<>(submissions.size());
        Instant now = clock.instant();
        for (int i = 0; i < submissions.size(); i++) {
            String where = place.batchId() == null ? "" : "tasks[" + i + "].";
            tasks.add(build(submissions.get(i), where, tenant, place, now));
        }
        return tasks;
    }

    /**
     * One task as it will be journaled, at {@code place}, if it breaks no rule ({@code where}: what
     * a refusal names before the field).
     *
     * @throws InvalidTaskException naming the field
     */
    private Insert build(Submission s, String where, String tenant, Placement place, Instant now) {
        String queueName = s.queue() == null ? TasklineConfig.DEFAULT_QUEUE : s.queue();
        QueueRoom queue = queues.get(queueName);
        if (queue == null) {
            throw new InvalidTaskException(where + "queue: unknown queue '" + queueName + "'");
        }
        QueueConfig queueConfig = queue.config();
        // A remote queue's tasks are run by workers elsewhere: any type they name, no handler here.
        TaskHandler handler = queueConfig.external() ? null : handlers.get(s.type());
        if (queueConfig.external() && !queueConfig.acceptsExternalType(s.type())) {
            throw new InvalidTaskException(where + "type: '" + s.type() + "' is not a type of queue '"
                    + queueConfig.name() + "' ("
                    + (queueConfig.types().isEmpty()
                            ? "1-128 letters, digits, '.', '_', ':' or '-'"
                            : "known: " + String.join(", ", queueConfig.types()))
                    + ")");
        }
        if (!queueConfig.external() && handler == null) {
            throw new InvalidTaskException(where + "type: unknown task type '" + s.type() + "' (known: "
                    + String.join(", ", handlers.types()) + ")");
        }
        int priority = s.priority() == null ? 0 : s.priority();
        if (priority < MIN_PRIORITY || priority > MAX_PRIORITY) {
            throw new InvalidTaskException(where + "priority must be from " + MIN_PRIORITY + " to " + MAX_PRIORITY);
        }
        int maxAttempts = s.maxAttempts() == null ? queueConfig.maxAttempts() : s.maxAttempts();
        if (maxAttempts < 1 || maxAttempts > MAX_ATTEMPTS) {
            throw new InvalidTaskException(where + "maxAttempts must be from 1 to " + MAX_ATTEMPTS);
        }
        long timeoutMs = s.timeoutMs() == null ? queueConfig.timeoutMs() : s.timeoutMs();
        if (timeoutMs < 1 || timeoutMs > MAX_TIMEOUT_MS) {
            throw new InvalidTaskException(where + "timeoutMs must be from 1 to " + MAX_TIMEOUT_MS);
        }
        Instant runAt = runAt(s, now, where);
        Instant startBy = startBy(s, runAt, where);
        try {
            if (handler != null) {
                handler.validate(s.payload());
            }
        } catch (InvalidPayloadException e) {
            throw new InvalidTaskException(where + "payload: " + e.getMessage());
        }
        return Insert.waiting(
                Task.builder(TaskIds.next(clock), queueConfig.name(), s.type())
                        .payloadJson(s.payload().encode())
                        .priority(priority)
                        .runAt(runAt)
                        .maxAttempts(maxAttempts)
                        .timeoutMs(timeoutMs)
                        .batch(place.batchId())
                        .tenant(tenant)
                        .concurrencyKey(s.concurrencyKey())
                        .startBy(startBy)
                        .scheduled(place.schedule(), place.tick())
                        .flow(place.flowId())
                        .flowKey(place.flowKey())
                        .hasParents(place.hasParents())
                        .build(),
                runAt,
                startBy);
    }

    // ---- schedules' ticks ---------------------------------------------------------------------

    /**
     * Checks a schedule's task as every tick will submit it, without admitting anything: a task that
     * would be refused for a rule it breaks is refused when the schedule is made, not at each tick.
     *
     * @throws InvalidTaskException naming the field, with {@code where} before it
     */
    public void check(Submission task, String where) {
        build(task, where, null, Placement.ALONE, clock.instant());
    }

    /**
     * A tick due: schedule {@code schedule} (journal id {@code scheduleId}) submits {@code
     * submission} for its tick at {@code tick}; with {@code skipIfRunning}, only when its last task is
     * finished.
     */
    public record DueTick(
            UUID scheduleId, String schedule, Instant tick, Submission submission, boolean skipIfRunning) {}

    /**
     * Admits schedules' ticks. Each due tick's task goes through the rules and the room of its queue
     * like any submission; one the queue has no room for becomes a skipped tick ("queue-full", with
     * the problem as its detail), and one that breaks a rule now (its queue gone from the config, a
     * deadline it cannot meet) a skipped tick too: decided once, never tried again. Then the journal
     * decides them all, with {@code skips}, in one transaction; the room of a tick that another node
     * decided first, or whose schedule is gone, is given back. Answers as {@code decide} does.
     *
     * @param decide the journal's decision of the ticks (JournalSchedules.decide), in one transaction
     */
    public Future<List<TickWrite.Decision>> admitTicks(
            List<DueTick> due,
            List<TickWrite> skips,
            Function<List<TickWrite>, Future<List<TickWrite.Decision>>> decide) {
        if (draining) {
            return Future.failedFuture(new ShuttingDownException());
        }
        Instant now = clock.instant();
        List<TickWrite> writes = new ArrayList<>(due.size() + skips.size());
        writes.addAll(skips);
        Map<TickWrite, Reservation> held = new IdentityHashMap<>();
        for (DueTick tick : due) {
            try {
                List<Insert> one = List.of(
                        build(tick.submission(), "task.", null, Placement.tick(tick.schedule(), tick.tick()), now));
                deadlinesAhead(one, now);
                startsInTime.check(one, now);
                Reservation reservation = queues.get(one.get(0).task().queue()).reserve(one, null, now);
                if (reservation.refusal() != null) {
                    writes.add(TickWrite.skip(
                            tick.scheduleId(),
                            tick.tick(),
                            "queue-full",
                            refused(reservation, 1).getMessage(),
                            1));
                    continue;
                }
                TickWrite write = TickWrite.fire(
                        tick.scheduleId(), tick.tick(), reservation.inserts().get(0), tick.skipIfRunning());
                writes.add(write);
                held.put(write, reservation);
            } catch (InvalidTaskException e) {
                writes.add(TickWrite.skip(tick.scheduleId(), tick.tick(), "refused", e.getMessage(), 1));
            } catch (DeadlineUnmeetableException e) {
                writes.add(TickWrite.skip(tick.scheduleId(), tick.tick(), "deadline-unmeetable", e.getMessage(), 1));
            }
        }
        if (writes.isEmpty()) {
            return Future.succeededFuture(List.of());
        }
        // Through compose, so that a decide that throws still gives the room back.
        return Future.succeededFuture(writes)
                .compose(decide)
                .onFailure(e -> held.values().forEach(Reservation::abort))
                .map(decisions -> {
                    for (TickWrite.Decision decision : decisions) {
                        Reservation reservation = held.get(decision.write());
                        if (reservation != null) {
                            settle(reservation, decision.outcome() == TickWrite.Outcome.FIRED);
                        }
                    }
                    return decisions;
                });
    }

    /**
     * The deadline of the task's first start: as given, or {@code startWithinMs} after it is due; to
     * the microsecond, as the journal keeps and enforces it, so that the answer shows the deadline that
     * holds. Whether it is still ahead is checked with the room ({@link #deadlinesAhead}), after an
     * idempotent request's replay has been looked for: the answer to a request accepted before its
     * deadline is still its answer afterwards.
     */
    private static Instant startBy(Submission s, Instant runAt, String where) {
        if (s.startBy() != null && s.startWithinMs() != null) {
            throw new InvalidTaskException(where + "give startBy or startWithinMs, not both");
        }
        if (s.startWithinMs() != null) {
            if (s.startWithinMs() < 1 || s.startWithinMs() > MAX_DELAY_MS) {
                throw new InvalidTaskException(where + "startWithinMs must be from 1 to " + MAX_DELAY_MS
                        + " (milliseconds after the task is due)");
            }
            return runAt.plusMillis(s.startWithinMs()).truncatedTo(ChronoUnit.MICROS);
        }
        if (s.startBy() != null && s.startBy().isAfter(runAt.plusMillis(MAX_DELAY_MS))) {
            // Beyond, the journal's timestamps (and a millisecond count) run out long before a deadline means anything.
            throw new InvalidTaskException(where + "startBy must be at most " + MAX_DELAY_MS
                    + " ms after the task is due, got " + s.startBy());
        }
        return s.startBy() == null ? null : s.startBy().truncatedTo(ChronoUnit.MICROS);
    }

    /** A deadline must be ahead, and not before the task is due (it could never be met). */
    private static void deadlinesAhead(List<Insert> tasks, Instant now) {
        for (int i = 0; i < tasks.size(); i++) {
            Insert task = tasks.get(i);
            if (task.startBy() == null) {
                continue;
            }
            String where = where(tasks, i);
            if (!task.startBy().isAfter(now)) {
                throw new InvalidTaskException(
                        where + "startBy must be in the future: " + task.startBy() + " is not after now (" + now + ")");
            }
            if (task.startBy().isBefore(task.runAt())) {
                throw new InvalidTaskException(where + "startBy must not be before the task is due: " + task.startBy()
                        + " is before its runAt (" + task.runAt() + ")");
            }
        }
    }

    private static String where(List<Insert> tasks, int i) {
        return tasks.get(0).task().batchId() == null ? "" : "tasks[" + i + "].";
    }

    private static Instant runAt(Submission s, Instant now, String where) {
        if (s.delayMs() != null && s.runAt() != null) {
            throw new InvalidTaskException(where + "give delayMs or runAt, not both");
        }
        if (s.delayMs() != null) {
            if (s.delayMs() < 0 || s.delayMs() > MAX_DELAY_MS) {
                throw new InvalidTaskException(where + "delayMs must be from 0 to " + MAX_DELAY_MS);
            }
            return now.plusMillis(s.delayMs());
        }
        if (s.runAt() != null) {
            if (s.runAt().isAfter(now.plusMillis(MAX_DELAY_MS))) {
                throw new InvalidTaskException(where + "runAt must be at most a year ahead");
            }
            // A time in the past means "now"; the task keeps its age from then for fairness.
            return s.runAt().isBefore(now) ? now : s.runAt();
        }
        return now;
    }
}
