package dev.taskline.service;

import static dev.taskline.service.Permits.allowed;
import static dev.taskline.service.Permits.permitted;

import dev.taskline.admission.Admission;
import dev.taskline.admission.Idempotency;
import dev.taskline.admission.SubmissionJson;
import dev.taskline.config.Trigger;
import dev.taskline.journal.JournalSteps;
import dev.taskline.metrics.StepMeters;
import dev.taskline.model.Page;
import dev.taskline.model.SignalSent;
import dev.taskline.model.SignalView;
import dev.taskline.model.StepView;
import dev.taskline.model.TaskState;
import dev.taskline.model.Waking;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.NotFoundException;
import dev.taskline.model.problem.TaskStateConflictException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.UUID;

/**
 * What callers do to durable tasks from outside: signal one, send events (which wake the tasks
 * waiting for them and start the tasks their triggers name), ask one to compensate, and read its
 * steps. A tenant's key reaches only its tenant's tasks; another tenant's task is as unknown to it
 * as one that does not exist, and its events reach only its own.
 */
public final class DurableService {

    public static final int MAX_NAME = 200;

    private final JournalSteps steps;
    private final Admission admission;
    private final List<Trigger> triggers;
    private final Waking waking;
    private final StepMeters meters;

    /** @param waking given the tasks a signal, event or cancel woke, for this node's queues to hold */
    public DurableService(
            JournalSteps steps, Admission admission, List<Trigger> triggers, Waking waking, StepMeters meters) {
        this.meters = meters;
        this.steps = steps;
        this.admission = admission;
        this.triggers = List.copyOf(triggers);
        this.waking = waking;
    }

    /** What a signal did: its id, and whether the task was waiting for it (and woke). */
    public record Signalled(UUID task, String name, long signalId, boolean woke) {}

    /**
     * Sends signal {@code name} with {@code payload} (null: {}) to a task that has not ended;
     * {@code idempotencyKey} (null: none) makes a repeat the same signal.
     */
    public Future<Signalled> signal(Caller caller, UUID id, String name, JsonObject payload, String idempotencyKey) {
        return allowed(() -> {
            caller.require(Scope.SUBMIT);
            checkName("a signal's name", name);
            Idempotency.check(idempotencyKey);
            String body = (payload == null ? new JsonObject() : payload).encode();
            return steps.signal(id, caller.tenant(), name, body, idempotencyKey).map(sent -> answer(id, name, sent));
        });
    }

    private Signalled answer(UUID id, String name, SignalSent sent) {
        if (sent.state() == null) {
            throw new NotFoundException("task", id);
        }
        if (sent.signalId() == null) {
            throw new TaskStateConflictException(TaskStateConflictException.Kind.ALREADY_FINISHED, id, sent.state());
        }
        if (!sent.repeated()) {
            meters.signal();
        }
        if (sent.woke() != null) {
            waking.hold(List.of(sent.woke()));
        }
        return new Signalled(id, name, sent.signalId(), sent.woke() != null);
    }

    /**
     * Receives event {@code name}: delivered to the tenant's tasks waiting for it, and one task
     * started per trigger of that name. An {@code eventId} (null: a new one) seen within a day gets
     * the first answer again and delivers nothing twice. {@code tenant}: the one the caller names.
     */
    public Future<JsonObject> event(Caller caller, String name, JsonObject data, String eventId, String tenant) {
        return allowed(() -> {
            caller.require(Scope.SUBMIT);
            checkName("an event's name", name);
            if (eventId != null) {
                checkName("an event's id", eventId);
            }
            String owner = caller.tenantFor(tenant);
            String journalTenant = owner == null ? "" : owner;
            String id = eventId == null ? UUID.randomUUID().toString() : eventId;
            String body = (data == null ? new JsonObject() : data).encode();
            JsonObject payload = data == null ? new JsonObject() : data;
            boolean triggered = triggers.stream().anyMatch(t -> t.event().equals(name));
            return steps.receive(journalTenant, id, name, body, !triggered).compose(received -> {
                if (received.fresh()) {
                    meters.event(received.delivered());
                    waking.hold(received.woke());
                    return triggered
                            ? trigger(owner, id, name, payload)
                                    .compose(
                                            started -> answered(journalTenant, id, name, received.delivered(), started))
                            : Future.succeededFuture(
                                    JournalSteps.answer(id, name, received.delivered(), new JsonArray()));
                }
                waking.hold(received.woke());
                return steps.eventAnswer(journalTenant, id)
                        .compose(earlier -> earlier != null
                                ? Future.succeededFuture(earlier)
                                // Received before, but its answer was never written (the node stopped
                                // between): its triggers run again, idempotently; its deliveries were made.
                                : trigger(owner, id, name, payload)
                                        .compose(started -> answered(journalTenant, id, name, 0, started)));
            });
        });
    }

    private Future<JsonObject> answered(
            String journalTenant, String id, String name, int delivered, JsonArray started) {
        JsonObject answer = JournalSteps.answer(id, name, delivered, started);
        return steps.eventAnswered(journalTenant, id, answer).map(answer);
    }

    /** One task per trigger of the event, each under an idempotency key of the event's id. */
    private Future<JsonArray> trigger(String owner, String id, String name, JsonObject data) {
        List<Future<String>> started = new ArrayList<>();
        for (int i = 0; i < triggers.size(); i++) {
            Trigger trigger = triggers.get(i);
            if (!trigger.event().equals(name)) {
                continue;
            }
            JsonObject task = new JsonObject()
                    .put("type", trigger.type())
                    .put("queue", trigger.queue())
                    .put("payload", data);
            if (trigger.concurrencyKey() != null) {
                Object key = pick(data, trigger.concurrencyKey());
                if (key instanceof String || key instanceof Number || key instanceof Boolean) {
                    task.put("concurrencyKey", String.valueOf(key));
                }
            }
            // The event's id names its triggers' tasks, in a namespace of their own that no caller's key reaches.
            String key = i + ":" + id;
            started.add(admission
                    .submitTriggered(SubmissionJson.task(task), key, owner)
                    .map(admitted -> admitted.tasks().get(0).task().id().toString()));
        }
        return Future.all(started).map(all -> {
            JsonArray ids = new JsonArray();
            started.forEach(f -> ids.add(f.result()));
            return ids;
        });
    }

    /** The value at {@code path} (data.a.b) of an event whose data is {@code data}; null when absent. */
    static Object pick(JsonObject data, String path) {
        Object at = data;
        for (String part : path.substring("data.".length()).split("\\.")) {
            if (!(at instanceof JsonObject object)) {
                return null;
            }
            at = object.getValue(part);
        }
        return at;
    }

    /**
     * Asks a task to undo what it did: a suspended task runs again at once with {@code
     * cancelled()} true, and its success ends it cancelled; a running one does so from its next
     * run. Any other task not ended is cancelled as a cancel without compensation would (answered
     * empty, for the caller to do so).
     *
     * @return true when the task will compensate; false when it should simply be cancelled
     */
    public Future<Boolean> compensate(Caller caller, UUID id) {
        return permitted(() -> caller.require(Scope.SUBMIT))
                .compose(v -> steps.compensate(id, caller.tenant(), new JsonObject().put("by", caller.keyId())))
                .map(woken -> {
                    if (woken.before() == null) {
                        throw new NotFoundException("task", id);
                    }
                    if (woken.before().terminal()) {
                        throw new TaskStateConflictException(
                                TaskStateConflictException.Kind.ALREADY_FINISHED, id, woken.before());
                    }
                    if (woken.task() != null) {
                        waking.hold(List.of(woken.task()));
                    }
                    return woken.before() == TaskState.RUNNING || woken.task() != null;
                });
    }

    /**
     * A task's steps, current wait and buffered signals, as its reads show them: the first page of
     * each, with the cursor of the next (null: none).
     */
    public record DurableView(
            List<StepView> steps, JsonObject waiting, List<SignalView> signals, String stepsNext, String signalsNext) {}

    /** Steps and signals a task's read shows at most; the rest are read in pages. */
    public static final int SHOWN = 50;

    /**
     * The durable part of a task the caller may already see (see TaskService#task): the first
     * {@value #SHOWN} steps and signals, at most {@code maxBytes} of each (one heavier comes alone).
     */
    public Future<DurableView> view(UUID id, long maxBytes) {
        return steps.steps(id, null, SHOWN, maxBytes)
                .compose(found -> steps.signalsWaiting(id, null, SHOWN, maxBytes)
                        .compose(signals -> steps.waitOf(id)
                                .map(wait -> new DurableView(
                                        found.items(), wait, signals.items(), found.next(), signals.next()))));
    }

    /** A page of the steps of a task the caller may already see, after position {@code after}. */
    public Future<Page<StepView>> steps(UUID id, Long after, int limit, long maxBytes) {
        return steps.steps(id, after, limit, maxBytes);
    }

    /** A page of the signals no wait has taken yet of a task the caller may already see. */
    public Future<Page<SignalView>> signals(UUID id, Long after, int limit, long maxBytes) {
        return steps.signalsWaiting(id, after, limit, maxBytes);
    }

    /** A name of a step, signal or event: 1 to {@value #MAX_NAME} characters, none of them NUL. */
    static void checkName(String what, String name) {
        if (name == null || name.isEmpty() || name.length() > MAX_NAME || name.indexOf('\0') >= 0) {
            throw new InvalidTaskException(what + " must be 1 to " + MAX_NAME + " characters, none of them NUL");
        }
    }
}
