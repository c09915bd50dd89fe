package dev.taskline.journal;

import dev.taskline.model.DurableStart;
import dev.taskline.model.Lease;
import dev.taskline.model.Page;
import dev.taskline.model.SignalSent;
import dev.taskline.model.SignalView;
import dev.taskline.model.StepView;
import dev.taskline.model.StepWritten;
import dev.taskline.model.Suspended;
import dev.taskline.model.Task;
import dev.taskline.model.TaskState;
import dev.taskline.model.Wait;
import dev.taskline.model.Woken;
import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import io.vertx.sqlclient.RowSet;
import io.vertx.sqlclient.SqlConnection;
import java.time.Clock;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Durable steps in the journal (migration 000019, sql/queries/steps.sql): steps written and read
 * back by attempts, suspended attempts, signals, events and the wake-ups they cause. Step writes
 * of concurrent attempts share statements, as claims and completions do.
 */
public final class JournalSteps {

    /** Steps of different attempts written in one statement, at most. */
    private static final int MAX_STEP_GROUP = 500;
    /** Events received in one transaction, at most; and how many may wait for it (then 429). */
    private static final int MAX_EVENT_GROUP = 500;

    private static final int MAX_EVENTS_WAITING = 20_000;
    /**
     * Tasks one event wakes through one field in one statement, at most: each gets a copy of its data
     * (up to durable.maxSignalBytes), so a statement writes at most this many copies; the rest are
     * reached by the next statement of the same transaction.
     */
    private static final int MOST_WOKEN = 1_000;

    private final Pool pool;
    private final Sql sql;
    private final Clock clock;
    private final int mostWoken;
    private final Sql.Bound<Params.StepWrite> stepWrite;
    private final Sql.Bound<Params.SuspendOpen> suspendOpen;
    private final Sql.Bound<Params.SignalSend> signalSend;
    private final Sql.Bound<Params.EventsIn> eventsReceive;
    private final Sql.Statement eventsAnswer;
    private final GroupCommit<StepRequest, StepWritten> steps;
    private final GroupCommit<EventRequest, Received> events;

    private final dev.taskline.config.TasklineConfig.Durable bounds;

    public JournalSteps(Pool pool, Clock clock) {
        this(pool, clock, dev.taskline.config.TasklineConfig.Durable.DEFAULTS);
    }

    /** @param bounds how many steps and signals a task may have, and how heavy each may be */
    public JournalSteps(Pool pool, Clock clock, dev.taskline.config.TasklineConfig.Durable bounds) {
        this(pool, clock, bounds, MOST_WOKEN);
    }

    /** @param mostWoken tasks one event wakes through one field in one statement (see {@link #MOST_WOKEN}) */
    JournalSteps(Pool pool, Clock clock, dev.taskline.config.TasklineConfig.Durable bounds, int mostWoken) {
        this.bounds = bounds;
        this.mostWoken = mostWoken;
        this.pool = pool;
        this.sql = Sql.queries();
        this.clock = clock;
        this.stepWrite = sql.bound("step_write", Params.StepWrite.class);
        this.suspendOpen = sql.bound("suspend_open", Params.SuspendOpen.class);
        this.signalSend = sql.bound("signal_send", Params.SignalSend.class);
        this.eventsReceive = sql.bound("events_receive", Params.EventsIn.class);
        this.eventsAnswer = sql.statement("events_answer");
        this.steps = new GroupCommit<>(MAX_STEP_GROUP, this::writeSteps);
        this.events = new GroupCommit<>(MAX_EVENT_GROUP, MAX_EVENTS_WAITING, 1, this::receiveAll);
    }

    public Clock clock() {
        return clock;
    }

    /**
     * Journals a step an attempt ran, fenced by its lease. The step already there keeps its first
     * result, which the answer gives. Null when the lease was lost.
     */
    public Future<StepWritten> step(Lease lease, String name, String resultJson) {
        long bytes = utf8(resultJson);
        if (bytes > bounds.maxStepBytes()) {
            return Future.failedFuture(new InvalidTaskException("step '" + name + "' has a result of " + bytes
                    + " bytes, more than a step may keep (durable.maxStepBytes " + bounds.maxStepBytes() + ")"));
        }
        return JournalFailures.guard(steps.submit(new StepRequest(lease, name, resultJson)))
                .compose(kept -> kept != null && kept.full()
                        ? Future.failedFuture(new InvalidTaskException("step '" + name + "' is refused: task "
                                + lease.taskId() + " has " + bounds.maxStepsPerTask()
                                + " steps, the most a task may have (durable.maxStepsPerTask)"))
                        : Future.succeededFuture(kept));
    }

    /** The bytes of {@code text} in UTF-8, as the bounds count them. */
    static long utf8(String text) {
        return text == null ? 0 : text.getBytes(java.nio.charset.StandardCharsets.UTF_8).length;
    }

    private Future<List<StepWritten>> writeSteps(List<StepRequest> requests) {
        int n = requests.size();
        UUID[] ids = new UUID[n];
        Long[] versions = new Long[n];
        String[] workers = new String[n];
        String[] names = new String[n];
        String[] results = new String[n];
        for (int i = 0; i < n; i++) {
            StepRequest r = requests.get(i);
            ids[i] = r.lease().taskId();
            versions[i] = r.lease().version();
            workers[i] = r.lease().workerId();
            names[i] = r.name();
            results[i] = r.resultJson();
        }
        return pool.preparedQuery(stepWrite.text())
                .execute(stepWrite.bind(
                        new Params.StepWrite(ids, versions, workers, names, results, now(), bounds.maxStepsPerTask())))
                .map(rows -> {
                    Map<String, StepWritten> written = new HashMap<>();
                    for (Row row : rows) {
                        written.put(
                                row.getUUID("id") + "\n" + row.getString("name"),
                                new StepWritten(
                                        row.getString("result"), row.getBoolean("first"), row.getBoolean("full")));
                    }
                    List<StepWritten> answers = new ArrayList<>(n);
                    for (StepRequest r : requests) {
                        answers.add(written.get(r.lease().taskId() + "\n" + r.name()));
                    }
                    return answers;
                });
    }

    /**
     * What attempts of durable tasks start from, by task id, after the open waits that can end
     * have ended; a task whose lease was lost is left out.
     */
    public Future<Map<UUID, DurableStart>> load(List<Lease> leases) {
        int n = leases.size();
        UUID[] ids = new UUID[n];
        Long[] versions = new Long[n];
        String[] workers = new String[n];
        for (int i = 0; i < n; i++) {
            ids[i] = leases.get(i).taskId();
            versions[i] = leases.get(i).version();
            workers[i] = leases.get(i).workerId();
        }
        Sql.Statement load = sql.statement("steps_load");
        return JournalFailures.guard(pool.preparedQuery(load.text())
                        .execute(
                                load.bind("ids", ids, "lease_versions", versions, "worker_ids", workers, "now", now())))
                .map(rows -> {
                    Map<UUID, Boolean> compensating = new LinkedHashMap<>();
                    Map<UUID, Map<String, String>> done = new HashMap<>();
                    for (Row row : rows) {
                        UUID id = row.getUUID("id");
                        compensating.put(id, row.getBoolean("compensating"));
                        Map<String, String> steps = done.computeIfAbsent(id, k -> new LinkedHashMap<>());
                        if (row.getString("name") != null) {
                            steps.put(row.getString("name"), row.getString("result"));
                        }
                    }
                    Map<UUID, DurableStart> started = new HashMap<>();
                    compensating.forEach((id, c) -> started.put(id, new DurableStart(c, done.get(id))));
                    return started;
                });
    }

    /**
     * Opens a suspend's wait, fenced by the lease (see suspend_open): the deadline its step keeps and
     * whether the task may run again at once. Null when the lease was lost.
     */
    public Future<Suspended> open(Lease lease, Wait wait) {
        Params.SuspendOpen params = new Params.SuspendOpen(
                lease.taskId(),
                lease.version(),
                lease.workerId(),
                wait.step(),
                wait.matchJson().encode(),
                wait.until() == null ? null : Times.utc(wait.until()),
                now());
        return JournalFailures.guard(pool.preparedQuery(suspendOpen.text()).execute(suspendOpen.bind(params)))
                .map(rows -> {
                    if (rows.size() == 0) {
                        return null;
                    }
                    Row row = rows.iterator().next();
                    return new Suspended(instant(row, "until"), Boolean.TRUE.equals(row.getBoolean("ready")));
                });
    }

    /** After a suspend committed: wakes the task if what it waits for came meanwhile (null: it did not). */
    public Future<Task> recheck(UUID id) {
        Sql.Statement recheck = sql.statement("suspend_recheck");
        return JournalFailures.guard(pool.preparedQuery(recheck.text()).execute(recheck.bind("id", id, "now", now())))
                .map(JournalSteps::firstTask);
    }

    /**
     * Sends a signal to a task of {@code tenant} (null: any): buffered, and the task woken if it
     * waits for it; {@code key} the sender's Idempotency-Key (null: none).
     */
    public Future<SignalSent> signal(UUID id, String tenant, String name, String payloadJson, String key) {
        long bytes = utf8(payloadJson);
        if (bytes > bounds.maxSignalBytes()) {
            return Future.failedFuture(new InvalidTaskException("the signal's payload has " + bytes
                    + " bytes, more than a signal may carry (durable.maxSignalBytes " + bounds.maxSignalBytes() + ")"));
        }
        return JournalFailures.guard(pool.preparedQuery(signalSend.text())
                        .execute(signalSend.bind(new Params.SignalSend(
                                id, tenant, name, payloadJson, key, now(), bounds.maxSignalsPerTask()))))
                .map(rows -> {
                    if (rows.size() == 0) {
                        return new SignalSent(null, null, false, null);
                    }
                    Row row = rows.iterator().next();
                    if (Boolean.TRUE.equals(row.getBoolean("full"))) {
                        throw new InvalidTaskException("task " + id + " has been sent " + bounds.maxSignalsPerTask()
                                + " signals, the most a task may be sent (durable.maxSignalsPerTask)");
                    }
                    Task woke =
                            row.getUUID("id") == null ? null : Rows.task(row).asDurable();
                    return new SignalSent(
                            TaskState.parse(row.getString("state")),
                            row.getLong("signal_id"),
                            row.getBoolean("repeated"),
                            woke);
                });
    }

    /**
     * What receiving an event did: whether its id was new (a seen one delivers nothing), how many
     * waiting tasks it reached, and tasks it (or another event of its group) woke, for this node's
     * queues to hold (each woken task is in one answer of the group).
     */
    public record Received(boolean fresh, int delivered, List<Task> woke) {}

    /**
     * Records an event and, the first time its id is seen, delivers it to the tenant's tasks waiting
     * for it. Events received together share a transaction. With {@code answer} (an event no
     * trigger starts tasks for) its answer is written in it too: {@code {id, name, delivered,
     * started: []}}, given again to a repeat of its id.
     */
    public Future<Received> receive(String tenant, String id, String name, String dataJson, boolean answer) {
        long bytes = utf8(dataJson);
        if (bytes > bounds.maxSignalBytes()) {
            // Each task it reaches gets a copy of its data, as a signal's payload.
            return Future.failedFuture(new InvalidTaskException("the event's data has " + bytes
                    + " bytes, more than a signal may carry (durable.maxSignalBytes " + bounds.maxSignalBytes() + ")"));
        }
        return JournalFailures.guard(events.submit(new EventRequest(tenant, id, name, dataJson, answer)));
    }

    private Future<List<Received>> receiveAll(List<EventRequest> requests) {
        OffsetDateTime now = now();
        return pool.withTransaction(conn -> deliver(conn, requests, now, false)
                .compose(first -> deliverRest(conn, requests, first.delivered().clone(), first, now)
                        .compose(v -> answerFresh(conn, requests, first))));
    }

    /**
     * One statement of events_receive over {@code events}: recorded and delivered, or ({@code again})
     * delivered only, to at most {@link #mostWoken} tasks each per field.
     */
    private Future<Delivery> deliver(SqlConnection conn, List<EventRequest> events, OffsetDateTime now, boolean again) {
        int n = events.size();
        String[] tenants = new String[n];
        String[] ids = new String[n];
        String[] names = new String[n];
        String[] datas = new String[n];
        for (int i = 0; i < n; i++) {
            EventRequest r = events.get(i);
            tenants[i] = r.tenant();
            ids[i] = r.id();
            names[i] = r.name();
            datas[i] = r.dataJson();
        }
        return conn.preparedQuery(eventsReceive.text())
                .execute(eventsReceive.bind(new Params.EventsIn(tenants, ids, names, datas, now, mostWoken, again)))
                .map(JournalSteps::delivery);
    }

    /** Each event's outcome; the answers of new events that are not triggered, written in the same transaction. */
    private Future<List<Received>> answerFresh(SqlConnection conn, List<EventRequest> requests, Delivery all) {
        int n = requests.size();
        List<Received> received = new ArrayList<>(n);
        List<Integer> answered = new ArrayList<>();
        for (int i = 0; i < n; i++) {
            boolean isNew = Boolean.TRUE.equals(all.fresh()[i]);
            received.add(new Received(isNew, all.delivered()[i], i == 0 ? all.woke() : List.of()));
            if (isNew && requests.get(i).answer()) {
                answered.add(i);
            }
        }
        if (answered.isEmpty()) {
            return Future.succeededFuture(received);
        }
        String[] at = new String[answered.size()];
        String[] of = new String[answered.size()];
        String[] json = new String[answered.size()];
        for (int k = 0; k < answered.size(); k++) {
            EventRequest r = requests.get(answered.get(k));
            at[k] = r.tenant();
            of[k] = r.id();
            json[k] = answer(r.id(), r.name(), all.delivered()[answered.get(k)], new JsonArray())
                    .encode();
        }
        return conn.preparedQuery(eventsAnswer.text())
                .execute(eventsAnswer.bind("tenants", at, "ids", of, "answers", json))
                .map(received);
    }

    /** What one statement of events_receive did: per event, whether new and how many it reached; the tasks woken. */
    private record Delivery(Boolean[] fresh, int[] delivered, List<Task> woke) {}

    private static Delivery delivery(RowSet<Row> rows) {
        Boolean[] fresh = null;
        Integer[] delivered = null;
        List<Task> woke = new ArrayList<>();
        for (Row row : rows) {
            fresh = row.getArrayOfBooleans("fresh");
            delivered = row.getArrayOfIntegers("delivered");
            if (row.getUUID("id") != null) {
                woke.add(Rows.task(row).asDurable());
            }
        }
        int[] counts = new int[delivered.length];
        for (int i = 0; i < counts.length; i++) {
            counts[i] = delivered[i];
        }
        return new Delivery(fresh, counts, woke);
    }

    /**
     * Delivers again, in the same transaction, each event whose last statement reached its bound of
     * woken tasks: the tasks it woke wait no more, so each round reaches the next ones, until one
     * reaches fewer. {@code all} (the first round's) gathers how many each event reached and the
     * tasks woken.
     */
    private Future<Void> deliverRest(
            SqlConnection conn, List<EventRequest> requests, int[] last, Delivery all, OffsetDateTime now) {
        List<Integer> again = new ArrayList<>();
        for (int i = 0; i < last.length; i++) {
            if (last[i] >= mostWoken) {
                again.add(i);
            }
        }
        if (again.isEmpty()) {
            return Future.succeededFuture();
        }
        return deliver(conn, again.stream().map(requests::get).toList(), now, true)
                .compose(round -> {
                    int[] next = new int[last.length];
                    for (int k = 0; k < again.size(); k++) {
                        next[again.get(k)] = round.delivered()[k];
                        all.delivered()[again.get(k)] += round.delivered()[k];
                    }
                    all.woke().addAll(round.woke());
                    return deliverRest(conn, requests, next, all, now);
                });
    }

    /** An event's answer: its id and name, how many waiting tasks it reached, the tasks it started. */
    public static JsonObject answer(String id, String name, int delivered, JsonArray started) {
        return new JsonObject()
                .put("id", id)
                .put("name", name)
                .put("delivered", delivered)
                .put("started", started);
    }

    /** The answer the event of this id was given (null: none yet, or no such event). */
    public Future<JsonObject> eventAnswer(String tenant, String id) {
        Sql.Statement read = sql.statement("event_answer");
        return JournalFailures.guard(pool.preparedQuery(read.text()).execute(read.bind("tenant", tenant, "id", id)))
                .map(rows -> {
                    String answer =
                            rows.size() == 0 ? null : rows.iterator().next().getString("answer");
                    return answer == null ? null : new JsonObject(answer);
                });
    }

    /** Writes the answer of an event that triggers started tasks for, once they were admitted. */
    public Future<Void> eventAnswered(String tenant, String id, JsonObject answer) {
        return JournalFailures.guard(pool.preparedQuery(eventsAnswer.text())
                        .execute(eventsAnswer.bind(
                                "tenants", new String[] {tenant},
                                "ids", new String[] {id},
                                "answers", new String[] {answer.encode()})))
                .mapEmpty();
    }

    /** Wakes suspended tasks whose time came, at most {@code most}, soonest first. */
    public Future<List<Task>> wakeDue(int most) {
        Sql.Statement wake = sql.statement("wake_due");
        return JournalFailures.guard(pool.preparedQuery(wake.text()).execute(wake.bind("now", now(), "most", most)))
                .map(JournalSteps::tasks);
    }

    /** The earliest wake time of any suspended task; null when none is. */
    public Future<Instant> nextWake() {
        return JournalFailures.guard(pool.preparedQuery(sql.get("next_wake")).execute())
                .map(rows -> instant(rows.iterator().next(), "next_wake"));
    }

    /**
     * A cancel that asks a task of {@code tenant} (null: any) to compensate: a suspended task is
     * woken for it. A state of null: no such task.
     */
    public Future<Woken> compensate(UUID id, String tenant, JsonObject detail) {
        Sql.Statement mark = sql.statement("cancel_compensate");
        return JournalFailures.guard(pool.preparedQuery(mark.text())
                        .execute(mark.bind("id", id, "tenant", tenant, "now", now(), "detail", detail.encode())))
                .map(rows -> {
                    if (rows.size() == 0) {
                        return new Woken(null, null);
                    }
                    Row row = rows.iterator().next();
                    TaskState before = TaskState.parse(row.getString("state"));
                    boolean woke = row.getUUID("id") != null && before == TaskState.PENDING;
                    return new Woken(before, woke ? Rows.task(row).asDurable() : null);
                });
    }

    /**
     * A page of a task's steps in the order reached (its open wait last), after position {@code
     * after} (null: from the first): at most {@code most}, and past the first at most {@code
     * maxBytes} of results.
     */
    public Future<Page<StepView>> steps(UUID id, Long after, int most, long maxBytes) {
        Sql.Statement read = sql.statement("task_steps");
        return JournalFailures.guard(pool.preparedQuery(read.text())
                        .execute(read.bind("id", id, "after", after, "most", most, "max_bytes", maxBytes)))
                .map(rows -> {
                    List<StepView> steps = new ArrayList<>();
                    long fetched = 0;
                    for (Row row : rows) {
                        fetched = row.getLong("fetched");
                        steps.add(new StepView(
                                row.getString("name"),
                                row.getBoolean("done"),
                                row.getString("result"),
                                instant(row, "until"),
                                row.getString("wait"),
                                row.getInteger("attempt"),
                                instant(row, "at"),
                                row.getLong("position")));
                    }
                    boolean more = !steps.isEmpty() && (steps.size() < fetched || fetched == most);
                    return new Page<>(
                            steps,
                            more ? String.valueOf(steps.get(steps.size() - 1).position()) : null);
                });
    }

    /** The wait a suspended task is in; null for a task in none. */
    public Future<JsonObject> waitOf(UUID id) {
        Sql.Statement read = sql.statement("task_wait");
        return JournalFailures.guard(pool.preparedQuery(read.text()).execute(read.bind("id", id)))
                .map(rows -> {
                    String wait =
                            rows.size() == 0 ? null : rows.iterator().next().getString("wait");
                    return wait == null ? null : new JsonObject(wait);
                });
    }

    /** A page of the signals sent to a task that no wait has taken yet, oldest first; as {@link #steps}. */
    public Future<Page<SignalView>> signalsWaiting(UUID id, Long after, int most, long maxBytes) {
        Sql.Statement read = sql.statement("task_signals_waiting");
        return JournalFailures.guard(pool.preparedQuery(read.text())
                        .execute(read.bind("id", id, "after", after, "most", most, "max_bytes", maxBytes)))
                .map(rows -> {
                    List<SignalView> signals = new ArrayList<>();
                    long fetched = 0;
                    for (Row row : rows) {
                        fetched = row.getLong("fetched");
                        signals.add(new SignalView(
                                row.getString("name"),
                                row.getString("payload"),
                                instant(row, "at"),
                                row.getLong("id")));
                    }
                    boolean more = !signals.isEmpty() && (signals.size() < fetched || fetched == most);
                    return new Page<>(
                            signals,
                            more
                                    ? String.valueOf(
                                            signals.get(signals.size() - 1).id())
                                    : null);
                });
    }

    /** Deletes events received before {@code cutoff}, at most {@code most}; answers how many. */
    public Future<Integer> deleteOldEvents(Instant cutoff, int most) {
        Sql.Statement delete = sql.statement("delete_old_events");
        return JournalFailures.guard(pool.preparedQuery(delete.text())
                        .execute(delete.bind("cutoff", Times.utc(cutoff), "most", most)))
                .map(RowSet::rowCount);
    }

    /**
     * Forgets event fields no task waits on, last filed before {@code cutoff}, at most {@code
     * most}; answers how many.
     */
    public Future<Integer> deleteUnwaitedFields(Instant cutoff, int most) {
        Sql.Statement delete = sql.statement("delete_unwaited_fields");
        return JournalFailures.guard(pool.preparedQuery(delete.text())
                        .execute(delete.bind("cutoff", Times.utc(cutoff), "most", most)))
                .map(RowSet::rowCount);
    }

    private static Task firstTask(RowSet<Row> rows) {
        List<Task> tasks = tasks(rows);
        return tasks.isEmpty() ? null : tasks.get(0);
    }

    private static List<Task> tasks(RowSet<Row> rows) {
        List<Task> tasks = new ArrayList<>(rows.size());
        for (Row row : rows) {
            tasks.add(Rows.task(row).asDurable());
        }
        return tasks;
    }

    private static Instant instant(Row row, String column) {
        OffsetDateTime at = row.getOffsetDateTime(column);
        return at == null ? null : at.toInstant();
    }

    private OffsetDateTime now() {
        return Times.utc(clock.instant());
    }

    private record StepRequest(Lease lease, String name, String resultJson) {}

    private record EventRequest(String tenant, String id, String name, String dataJson, boolean answer) {}
}
