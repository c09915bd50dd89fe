package dev.taskline.http;

import com.fasterxml.jackson.core.io.JsonStringEncoder;
import dev.taskline.admission.Admitted;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.model.BatchView;
import dev.taskline.model.Event;
import dev.taskline.model.Insert;
import dev.taskline.model.NodeRecord;
import dev.taskline.model.OmittedResult;
import dev.taskline.model.QueueControl;
import dev.taskline.model.ScheduleRecord;
import dev.taskline.model.SignalView;
import dev.taskline.model.StepView;
import dev.taskline.model.Task;
import dev.taskline.model.TaskSnapshot;
import dev.taskline.model.TaskState;
import dev.taskline.model.TaskView;
import dev.taskline.model.TickRecord;
import dev.taskline.schedule.ScheduleSpec;
import dev.taskline.schedule.ScheduleView;
import dev.taskline.service.DurableService;
import dev.taskline.service.NodeService;
import dev.taskline.service.Views.QueueView;
import dev.taskline.service.Views.Stats;
import dev.taskline.support.IsoTime;
import dev.taskline.worker.Ended;
import dev.taskline.worker.RemoteWorkers;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/** The JSON shapes of the API and of its streams: the one place where records become JSON. */
final class ApiJson {

    private ApiJson() {}

    /**
     * A single submission's 202: the task as {@link #acceptedBatch} shows each of its tasks, plus
     * the URL of its stream. Written as text by the same code as the batch's, so that the shape of
     * a 202 is written once.
     */
    static String accepted(Insert insert, String eventsUrl) {
        StringBuilder out = new StringBuilder(224);
        appendAccepted(out, insert, IsoTime.format(insert.runAt()), JsonStringEncoder.getInstance(), false);
        out.append(",\"eventsUrl\":");
        return string(out, eventsUrl, JsonStringEncoder.getInstance())
                .append('}')
                .toString();
    }

    /**
     * A batch's 202, {@code {"batchId", "eventsUrl", "tasks": [...]}}, written as text rather than
     * as a map per task built only to be encoded at once. Its tasks mostly share one runAt,
     * formatted once.
     */
    static String acceptedBatch(Admitted admitted, String eventsUrl) {
        List<Insert> tasks = admitted.tasks();
        JsonStringEncoder quote = JsonStringEncoder.getInstance();
        StringBuilder out = new StringBuilder(96 + tasks.size() * 160)
                .append("{\"batchId\":\"")
                .append(admitted.batchId())
                .append("\",\"eventsUrl\":");
        string(out, eventsUrl, quote).append(",\"tasks\":[");
        Instant runAt = null;
        String runAtText = null;
        for (int i = 0; i < tasks.size(); i++) {
            Insert insert = tasks.get(i);
            if (!insert.runAt().equals(runAt)) {
                runAt = insert.runAt();
                runAtText = IsoTime.format(runAt);
            }
            if (i > 0) {
                out.append(',');
            }
            appendAccepted(out, insert, runAtText, quote, true);
        }
        return out.append("]}").toString();
    }

    /**
     * A task as a 202 shows it: running when it was journaled claimed (its queue was idle), else
     * pending; with its deadline when it has one. {@code close}: end the object here, else leave it
     * open for more fields.
     */
    private static void appendAccepted(
            StringBuilder out, Insert insert, String runAtText, JsonStringEncoder quote, boolean close) {
        Task task = insert.task();
        out.append("{\"id\":\"")
                .append(task.id())
                .append("\",\"state\":\"")
                .append((insert.claimed() ? TaskState.RUNNING : TaskState.PENDING).sql())
                .append("\",\"queue\":");
        string(out, task.queue(), quote).append(",\"type\":");
        string(out, task.type(), quote)
                .append(",\"priority\":")
                .append(task.priority())
                .append(",\"runAt\":\"")
                .append(runAtText)
                .append('"');
        if (insert.startBy() != null) {
            out.append(",\"startBy\":\"")
                    .append(IsoTime.format(insert.startBy()))
                    .append('"');
        }
        if (close) {
            out.append('}');
        }
    }

    /** A JSON string; null as JSON's null, as the maps these answers replaced wrote it. */
    private static StringBuilder string(StringBuilder out, String value, JsonStringEncoder quote) {
        return value == null
                ? out.append("null")
                : out.append('"').append(quote.quoteAsString(value)).append('"');
    }

    /**
     * A task's durable part, as its read shows it: the steps done (name, result, at, attempt), the
     * wait it is in (null: none) and the signals no wait has taken yet.
     */
    static JsonObject durable(UUID id, DurableService.DurableView view) {
        JsonObject json = new JsonObject()
                .put("steps", steps(view.steps()))
                .put("wait", view.waiting())
                .put("signals", signals(view.signals()));
        // The first page of each: the rest through the link.
        if (view.stepsNext() != null) {
            json.put("stepsNext", "/api/tasks/" + id + "/steps?after=" + view.stepsNext());
        }
        if (view.signalsNext() != null) {
            json.put("signalsNext", "/api/tasks/" + id + "/signals?after=" + view.signalsNext());
        }
        return json;
    }

    /** Steps done, as a task's read and its steps' pages show them. */
    static JsonArray steps(List<StepView> found) {
        JsonArray steps = new JsonArray();
        for (StepView step : found) {
            if (!step.done()) {
                continue;
            }
            steps.add(new JsonObject()
                    .put("name", step.name())
                    .put("result", step.resultJson() == null ? null : Json.decodeValue(step.resultJson()))
                    .put("at", time(step.at()))
                    .put("attempt", step.attempt()));
        }
        return steps;
    }

    /** Signals no wait has taken yet, as a task's read and its signals' pages show them. */
    static JsonArray signals(List<SignalView> found) {
        JsonArray signals = new JsonArray();
        for (SignalView signal : found) {
            signals.add(new JsonObject()
                    .put("name", signal.name())
                    .put("payload", new JsonObject(signal.payloadJson()))
                    .put("at", time(signal.at())));
        }
        return signals;
    }

    /** A page of a task's history. */
    static JsonArray history(List<Event> events) {
        JsonArray history = new JsonArray();
        events.forEach(event -> history.add(historyEvent(event)));
        return history;
    }

    static JsonObject task(TaskView task) {
        JsonObject json = new JsonObject()
                .put("id", task.id().toString())
                .put("queue", task.queue())
                .put("type", task.type())
                .put("state", state(task.state()))
                .put("priority", task.priority())
                .put("attempt", task.attempt())
                .put("maxAttempts", task.maxAttempts())
                .put("leaseVersion", task.leaseVersion())
                .put("payload", task.payload())
                .put("result", task.result())
                .put("error", task.error())
                .put("progress", progress(task.progressPercent(), task.progressMessage()))
                .put("runAt", time(task.runAt()))
                .put("createdAt", time(task.createdAt()))
                .put("updatedAt", time(task.updatedAt()))
                .put("startedAt", time(task.startedAt()))
                .put("finishedAt", time(task.finishedAt()));
        if (task.leftOut() != null) {
            // Too heavy for the page (http.maxInlineBytes, http.maxPageBytes): the task's read has them.
            json.put("payloadBytes", task.leftOut().payloadBytes())
                    .put("resultBytes", task.leftOut().resultBytes())
                    .put("errorBytes", task.leftOut().errorBytes())
                    .put("resultUrl", "/api/tasks/" + task.id());
        }
        if (task.batchId() != null) {
            json.put("batchId", task.batchId().toString());
        }
        if (task.tenant() != null) {
            json.put("tenant", task.tenant());
        }
        if (task.concurrencyKey() != null) {
            json.put("concurrencyKey", task.concurrencyKey());
        }
        if (task.timeoutMs() != null) {
            json.put("timeoutMs", task.timeoutMs());
        }
        if (task.startBy() != null) {
            json.put("startBy", time(task.startBy()));
        }
        if (task.flowId() != null) {
            json.put("flowId", task.flowId().toString()).put("flowKey", task.flowKey());
        }
        if (task.schedule() != null) {
            json.put("schedule", task.schedule()).put("scheduledFor", time(task.scheduledFor()));
        }
        if (task.workerId() != null) {
            json.put("workerId", task.workerId());
            json.put("leaseExpiresAt", time(task.leaseExpiresAt()));
        }
        if (task.history() != null) {
            JsonArray history = new JsonArray();
            task.history().forEach(event -> history.add(historyEvent(event)));
            json.put("history", history);
        }
        return json;
    }

    static JsonArray tasks(List<TaskView> tasks) {
        JsonArray list = new JsonArray();
        tasks.forEach(task -> list.add(task(task)));
        return list;
    }

    private static JsonObject historyEvent(Event event) {
        JsonObject json = new JsonObject()
                .put("eventId", event.eventId())
                .put("from", state(event.from()))
                .put("to", state(event.to()))
                .put("reason", event.reason() == null ? null : event.reason().sql())
                .put("at", time(event.at()));
        if (event.workerId() != null) {
            json.put("workerId", event.workerId());
        }
        if (event.leaseVersion() != null) {
            json.put("leaseVersion", event.leaseVersion());
        }
        if (event.attempt() != null) {
            json.put("attempt", event.attempt());
        }
        if (event.detail() != null) {
            json.put("detail", event.detail());
        }
        return json;
    }

    static JsonObject batch(BatchView batch) {
        JsonObject counts = new JsonObject();
        for (Map.Entry<TaskState, Integer> count : batch.counts().entrySet()) {
            counts.put(count.getKey().sql(), count.getValue());
        }
        return new JsonObject()
                .put("id", batch.id().toString())
                .put("size", batch.size())
                .put("createdAt", time(batch.createdAt()))
                .put("counts", counts)
                .put("tasks", tasks(batch.tasks()));
    }

    static JsonObject queue(QueueView queue) {
        JsonObject json = new JsonObject()
                .put("name", queue.name())
                .put("waiting", queue.waiting())
                .put("running", queue.running())
                .put("scheduled", queue.scheduled())
                .put("slots", queue.slots())
                .put("capacity", queue.capacity())
                .put("scheduledCapacity", queue.scheduledCapacity())
                .put("tenantLimit", queue.tenantLimit())
                .put("accepted", queue.accepted())
                .put("finished", queue.finished())
                .put("expired", queue.expired())
                .put("unfinished", queue.unfinished())
                .put("rejected", queue.rejected())
                .put("fencedWrites", queue.fencedWrites())
                .put("leaseTakeovers", queue.leaseTakeovers())
                .put("lagSeconds", queue.lagSeconds())
                .put("rates", rates(queue.rates()))
                .put("paused", queue.control().paused());
        if (queue.control().paused()) {
            json.put("pausedAt", time(queue.control().changedAt()))
                    .put("pausedBy", queue.control().changedBy());
        }
        if (queue.keyLimits().any()) {
            json.put("keyConcurrency", queue.keyLimits().perKey())
                    .put(
                            "keyLimits",
                            new JsonObject(new java.util.LinkedHashMap<>(
                                    queue.keyLimits().overrides())));
            if (queue.heldByKeys() != null) {
                // Of the waiting, those held back because their key is at its bound.
                json.put("heldByKeys", queue.heldByKeys());
            }
        }
        if (queue.rateLimit() != null) {
            json.put(
                    "rateLimit",
                    new JsonObject()
                            .put("tasks", queue.rateLimit().tasks())
                            .put("perMs", queue.rateLimit().perMs())
                            .put("perKey", queue.rateLimit().perKey()));
            if (queue.heldByRate() != null) {
                // Of the waiting, those held back because the limit has no start left in its window.
                json.put("heldByRate", queue.heldByRate());
            }
        }
        if (queue.claimedAhead() != null) {
            // Of the waiting, those leased here ahead of a free slot; of the running, those whose end is being
            // journaled.
            json.put("claimedAhead", queue.claimedAhead()).put("finishing", queue.finishing());
        }
        return json;
    }

    /** A queue's pause switch, as a pause or resume answers it. */
    static JsonObject pause(QueueControl control) {
        return new JsonObject()
                .put("queue", control.queue())
                .put("paused", control.paused())
                .put("changedAt", time(control.changedAt()))
                .put("changedBy", control.changedBy());
    }

    static JsonObject stats(Stats stats) {
        return new JsonObject()
                .put("accepted", stats.accepted())
                .put("finished", stats.finished())
                .put("rejected", stats.rejected())
                .put("waiting", stats.waiting())
                .put("scheduled", stats.scheduled())
                .put("running", stats.running())
                .put("unfinished", stats.unfinished())
                .put("expired", stats.expired())
                .put("rates", rates(stats.rates()));
    }

    /** Rates per second; the trend is how fast the backlog grows (negative: drains). */
    private static JsonObject rates(QueueMeters.Rates rates) {
        if (rates == null) {
            return null;
        }
        return new JsonObject()
                .put("arrival10s", round(rates.arrivals10s()))
                .put("arrival60s", round(rates.arrivals60s()))
                .put("completion10s", round(rates.completions10s()))
                .put("completion60s", round(rates.completions60s()))
                .put("backlogTrend10s", round(rates.arrivals10s() - rates.completions10s()))
                .put("backlogTrend60s", round(rates.arrivals60s() - rates.completions60s()));
    }

    // ---- remote workers -----------------------------------------------------------------------

    /**
     * A claim's answer, {@code {"tasks": [...]}}, written as text: each payload goes in as the JSON
     * text the journal holds (jsonb, so valid JSON), not parsed into objects and encoded again.
     */
    static String claimed(List<RemoteWorkers.Claimed> claimed) {
        return claimed(claimed, "");
    }

    /**
     * The claim answer, with {@code before} (JSON members with their trailing comma, or empty)
     * ahead of its tasks: a work call's answers to what it completed.
     */
    static String claimed(List<RemoteWorkers.Claimed> claimed, String before) {
        StringBuilder out = new StringBuilder(64 + before.length() + claimed.size() * 400)
                .append('{')
                .append(before)
                .append("\"tasks\":[");
        JsonStringEncoder quote = JsonStringEncoder.getInstance();
        for (int i = 0; i < claimed.size(); i++) {
            RemoteWorkers.Claimed c = claimed.get(i);
            Task task = c.task();
            out.append(i == 0 ? "{" : ",{")
                    .append("\"id\":\"")
                    .append(task.id())
                    .append('"')
                    .append(",\"type\":\"")
                    .append(quote.quoteAsString(task.type()))
                    .append('"')
                    .append(",\"payload\":")
                    .append(task.payloadJson())
                    .append(",\"attempt\":")
                    .append(c.lease().attempt())
                    .append(",\"maxAttempts\":")
                    .append(task.maxAttempts());
            if (task.schedule() != null) {
                out.append(",\"schedule\":\"")
                        .append(quote.quoteAsString(task.schedule()))
                        .append('"')
                        .append(",\"scheduledFor\":\"")
                        .append(IsoTime.format(task.scheduledFor()))
                        .append('"');
            }
            if (c.parents().byReference()) {
                // Too heavy to hand over inline (flows.maxParentBytes): the worker reads them in pages.
                out.append(",\"parentsRef\":{\"count\":")
                        .append(c.parents().count())
                        .append(",\"bytes\":")
                        .append(c.parents().bytes())
                        .append(",\"url\":\"")
                        .append(dev.taskline.model.Parents.url(task.id()))
                        .append("\"}");
            } else if (c.parents().count() > 0) {
                // As the journal built them (JSON), not decoded and encoded again.
                out.append(",\"parents\":")
                        .append(c.parents().valuesJson())
                        .append(",\"parentStates\":")
                        .append(c.parents().statesJson());
            }
            if (c.steps() != null) {
                // As the journal holds them (JSON text), not decoded and encoded again.
                out.append(",\"steps\":{");
                boolean first = true;
                for (java.util.Map.Entry<String, String> step :
                        c.steps().steps().entrySet()) {
                    out.append(first ? "\"" : ",\"")
                            .append(quote.quoteAsString(step.getKey()))
                            .append("\":")
                            .append(step.getValue());
                    first = false;
                }
                out.append('}');
                if (c.steps().compensating()) {
                    out.append(",\"compensating\":true");
                }
            }
            out.append(",\"lease\":{\"token\":\"")
                    .append(quote.quoteAsString(c.token()))
                    .append('"')
                    .append(",\"version\":")
                    .append(c.lease().version())
                    .append(",\"expiresAt\":\"")
                    .append(c.expiresAt())
                    .append("\"}}");
        }
        return out.append("]}").toString();
    }

    /**
     * A schedule: its definition, pause, next fire times, its newest tick (the last result) and its
     * skips and last error in the journal; {@code recentTicks} for one read by name.
     */
    static JsonObject schedule(ScheduleView view) {
        ScheduleSpec spec = view.spec();
        ScheduleRecord row = view.row();
        JsonObject json = new JsonObject().put("name", spec.name());
        json.mergeIn(spec.stored());
        JsonArray next = new JsonArray();
        view.nextFireTimes().forEach(t -> next.add(time(t)));
        json.put("paused", row.row().paused())
                .put("origin", row.origin())
                .put("createdAt", time(row.row().createdAt()))
                .put("changedAt", time(row.row().changedAt()))
                .put(
                        "nextFireAt",
                        row.row().paused() || view.nextFireTimes().isEmpty()
                                ? null
                                : time(view.nextFireTimes().get(0)))
                .put("nextFireTimes", next)
                .put("skippedTicks", row.skipped());
        if (row.changedBy() != null) {
            json.put("changedBy", row.changedBy());
        }
        json.put(
                "lastTick",
                row.row().lastTickAt() == null
                        ? null
                        : new JsonObject()
                                .put("tickAt", time(row.row().lastTickAt()))
                                .put("outcome", row.lastOutcome())
                                .put(
                                        "taskId",
                                        row.lastTaskId() == null
                                                ? null
                                                : row.lastTaskId().toString())
                                .put("taskState", row.lastTaskState())
                                .put("reason", row.lastReason())
                                .put("detail", row.lastDetail()));
        json.put(
                "lastError",
                row.errorAt() == null
                        ? null
                        : new JsonObject()
                                .put("tickAt", time(row.errorTickAt()))
                                .put("at", time(row.errorAt()))
                                .put("detail", row.errorDetail()));
        if (view.recentTicks() != null) {
            JsonArray ticks = new JsonArray();
            for (TickRecord tick : view.recentTicks()) {
                JsonObject t =
                        new JsonObject().put("tickAt", time(tick.tickAt())).put("outcome", tick.outcome());
                if (tick.taskId() != null) {
                    t.put("taskId", tick.taskId().toString()).put("taskState", tick.taskState());
                }
                if (tick.reason() != null) {
                    t.put("reason", tick.reason()).put("detail", tick.detail());
                }
                if (tick.ticks() > 1) {
                    t.put("ticks", tick.ticks());
                }
                ticks.add(t.put("decidedAt", time(tick.decidedAt())).put("decidedBy", tick.decidedBy()));
            }
            json.put("recentTicks", ticks);
        }
        return json;
    }

    static JsonObject beat(RemoteWorkers.Beat beat) {
        return new JsonObject().put("expiresAt", time(beat.expiresAt())).put("cancelRequested", beat.cancelRequested());
    }

    /** What became of a failed attempt, with the task's id unless {@code id} is null (an item of a list that names it). */
    static JsonObject failOutcome(UUID id, Ended outcome) {
        JsonObject json = new JsonObject();
        if (id != null) {
            json.put("id", id.toString());
        }
        json.put("state", outcome.state().sql());
        if (outcome.retryAt() != null) {
            json.put("retryAt", time(outcome.retryAt()));
        }
        return json;
    }

    static JsonObject nodes(NodeService.Nodes nodes) {
        JsonArray list = new JsonArray();
        for (NodeRecord node : nodes.nodes()) {
            list.add(new JsonObject()
                    .put("id", node.id())
                    .put("self", node.id().equals(nodes.self()))
                    .put("live", node.live())
                    .put("version", node.version())
                    .put("address", node.address())
                    .put("startedAt", time(node.startedAt()))
                    .put("lastHeartbeat", time(node.seenAt()))
                    .put(
                            "heartbeatAgeMs",
                            Math.max(
                                    0,
                                    node.readAt().toEpochMilli() - node.seenAt().toEpochMilli()))
                    .put("goneAt", time(node.goneAt() != null ? node.goneAt() : node.live() ? null : node.expiresAt()))
                    .put("queuesHash", node.queuesHash())
                    .put("configEpoch", node.configEpoch())
                    .put("streams", node.streams())
                    .put("connections", node.connections())
                    .put("leases", new JsonArray(node.leases())));
        }
        return new JsonObject().put("self", nodes.self()).put("nodes", list);
    }

    static JsonObject worker(RemoteWorkers.Worker worker) {
        return new JsonObject()
                .put("name", worker.name())
                .put("queue", worker.queue())
                .put("leases", worker.leases())
                .put("lastSeen", time(worker.lastSeen()))
                .put("tenant", worker.tenant());
    }

    // ---- stream events ------------------------------------------------------------------------

    static JsonObject snapshot(List<TaskSnapshot> tasks) {
        JsonArray states = new JsonArray();
        for (TaskSnapshot task : tasks) {
            states.add(new JsonObject()
                    .put("id", task.id().toString())
                    .put("state", state(task.state()))
                    .put("attempt", task.attempt())
                    .put("progress", progress(task.progressPercent(), task.progressMessage()))
                    .put("result", task.result())
                    .put("error", task.error())
                    // The page can tell a replayed transition it already reflects from a new one.
                    .put("lastEventId", task.lastEventId()));
            if (task.leftOut()) {
                // Too heavy for the snapshot (http.maxInlineBytes, http.maxPageBytes): the task's read has it.
                states.getJsonObject(states.size() - 1)
                        .put("resultBytes", task.bytes())
                        .put("resultUrl", "/api/tasks/" + task.id());
            }
        }
        return new JsonObject().put("tasks", states);
    }

    static JsonObject stateEvent(Event event, Object result, Object error) {
        JsonObject json = new JsonObject()
                .put("taskId", event.taskId().toString())
                .put("from", state(event.from()))
                .put("to", state(event.to()))
                .put("reason", event.reason() == null ? null : event.reason().sql())
                .put("attempt", event.attempt())
                .put("leaseVersion", event.leaseVersion())
                .put("at", time(event.at()));
        if (event.detail() != null) {
            json.put("detail", event.detail());
        }
        if (event.to() == TaskState.SUCCEEDED) {
            putResult(json, event.taskId(), result);
        } else if (error != null) {
            json.put("error", error);
        }
        return json;
    }

    /** A result, or where to read it when it was too heavy to carry here. */
    private static void putResult(JsonObject json, UUID taskId, Object result) {
        if (result instanceof OmittedResult omitted) {
            json.put("result", null).put("resultBytes", omitted.bytes()).put("resultUrl", "/api/tasks/" + taskId);
        } else {
            json.put("result", result);
        }
    }

    static JsonObject resultEvent(UUID taskId, TaskState state, Object result, Object error) {
        JsonObject json = new JsonObject().put("taskId", taskId.toString()).put("state", state.sql());
        if (state == TaskState.SUCCEEDED) {
            putResult(json, taskId, result);
        } else if (error != null) {
            json.put("error", error);
        }
        return json;
    }

    static JsonObject progressEvent(UUID taskId, int percent, String message) {
        return new JsonObject()
                .put("taskId", taskId.toString())
                .put("percent", percent)
                .put("message", message);
    }

    private static JsonObject progress(int percent, String message) {
        return new JsonObject().put("percent", percent).put("message", message);
    }

    private static String state(TaskState state) {
        return state == null ? null : state.sql();
    }

    private static String time(Instant time) {
        return time == null ? null : IsoTime.format(time);
    }

    private static double round(double value) {
        return Math.round(value * 100) / 100.0;
    }
}
