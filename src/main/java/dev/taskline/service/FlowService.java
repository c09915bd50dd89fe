package dev.taskline.service;

import static dev.taskline.service.Permits.allowed;
import static dev.taskline.service.Permits.permitted;

import dev.taskline.control.TaskControl;
import dev.taskline.events.StreamSink;
import dev.taskline.events.TaskStream;
import dev.taskline.journal.JournalFlows;
import dev.taskline.model.Cancelled;
import dev.taskline.model.FlowAccepted;
import dev.taskline.model.FlowRecord;
import dev.taskline.model.FlowView;
import dev.taskline.model.ParentsPage;
import dev.taskline.model.TaskState;
import dev.taskline.model.problem.NotFoundException;
import dev.taskline.workflow.Flows;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.util.List;
import java.util.UUID;
import java.util.function.Supplier;

/**
 * Flows, as a caller may ask for them: submit, read, list, follow, cancel, retry. A flow and its
 * tasks belong to the tenant of the key that submitted it; a tenant's key sees only its own, and
 * another tenant's flow is as unknown to it as one that does not exist.
 */
public final class FlowService {

    private final Flows flows;
    private final JournalFlows journal;
    private final TaskControl control;
    private final TaskService tasks;

    public FlowService(Flows flows, JournalFlows journal, TaskControl control, TaskService tasks) {
        this.flows = flows;
        this.journal = journal;
        this.control = control;
        this.tasks = tasks;
    }

    /** Accepts a flow, all or nothing; {@code idempotencyKey} and {@code tenant} (the one the caller names) may be null. */
    public Future<FlowAccepted> submit(Caller caller, JsonObject body, String idempotencyKey, String tenant) {
        return allowed(() -> {
            caller.require(Scope.SUBMIT);
            return flows.submit(body, idempotencyKey, caller.tenantFor(tenant));
        });
    }

    /**
     * The flow with a page of its tasks: after task {@code after} (null: the first), at most {@code
     * limit}, results and errors shown up to {@code maxInline} each and {@code maxPage} together.
     */
    public Future<FlowView> flow(Caller caller, UUID id, UUID after, int limit, long maxInline, long maxPage) {
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> visible(caller, id))
                .compose(flow -> journal.stateCounts(id)
                        .compose(counts -> journal.tasks(id, after, limit, maxInline, maxPage)
                                .map(found -> new FlowView(
                                        flow,
                                        counts,
                                        found,
                                        found.size() == limit
                                                ? found.get(found.size() - 1).id()
                                                : null))));
    }

    /**
     * A page of what a flow task's parents ended with (see {@link JournalFlows#parentsPage}): for a
     * key that reads the task's tenant, or one that works the task's queue (its worker, handed a
     * reference by its claim).
     */
    public Future<ParentsPage> parents(Caller caller, UUID id, String after, int limit, long maxBytes) {
        // A caller that could read no task's parents is refused before any is looked up.
        Future<Void> may = caller.scopes().contains(Scope.READ)
                ? Future.succeededFuture()
                : permitted(() -> caller.require(Scope.WORK));
        return may.compose(v -> journal.parentsPage(id, after, limit, maxBytes)).map(page -> {
            if (page == null || !caller.sees(page.tenant())) {
                throw new NotFoundException("task", id);
            }
            if (!caller.scopes().contains(Scope.READ) && !caller.scopes().contains(Scope.ADMIN)) {
                caller.requireWork(page.queue());
            }
            return page;
        });
    }

    /** A page of the flows the caller may see, newest first; {@code next} is the cursor of the following page. */
    public record FlowPage(List<FlowRecord> flows, UUID next) {}

    public Future<FlowPage> list(Caller caller, String state, String name, UUID after, int limit) {
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> journal.list(state, name, after, limit, caller.tenant()))
                .map(found -> new FlowPage(
                        found,
                        found.size() == limit ? found.get(found.size() - 1).id() : null));
    }

    /** What a cancel of a whole flow did: tasks cancelled at once, running ones asked to stop. */
    public record FlowCancellation(UUID flowId, int cancelled, int cancelling) {}

    /** Cancels every unfinished task of the flow: blocked and pending ones at once, running ones by asking. */
    public Future<FlowCancellation> cancel(Caller caller, UUID id) {
        return permitted(() -> caller.require(Scope.SUBMIT))
                .compose(v -> visible(caller, id))
                .compose(flow -> journal.taskIds(id, "blocked", "pending", "running"))
                .compose(ids -> control.cancelTasks(ids, caller.keyId()))
                .map(found -> {
                    int cancelled = 0;
                    int cancelling = 0;
                    for (Cancelled task : found) {
                        if (task.after() == TaskState.CANCELLED
                                && !task.before().terminal()) {
                            cancelled++;
                        } else if (task.after() == TaskState.RUNNING) {
                            cancelling++;
                        }
                    }
                    return new FlowCancellation(id, cancelled, cancelling);
                });
    }

    /**
     * Retries every failed or expired task of the flow; what their failures cancelled waits again,
     * so the flow resumes from the steps that failed. Answers the tasks retried.
     */
    public Future<List<UUID>> retry(Caller caller, UUID id) {
        return permitted(() -> caller.require(Scope.SUBMIT))
                .compose(v -> visible(caller, id))
                .compose(flow -> journal.taskIds(id, "failed", "expired"))
                .compose(ids -> ids.isEmpty() ? Future.succeededFuture(List.of()) : control.retry(ids, caller.keyId()));
    }

    /** Opens a stream of every transition of the flow's tasks, after {@code afterEventId}; it ends with the flow. */
    public Future<TaskStream> stream(Caller caller, UUID id, long afterEventId, Supplier<StreamSink> sink) {
        return permitted(() -> caller.require(Scope.READ))
                .compose(v -> visible(caller, id))
                .compose(flow -> journal.taskIds(id, TaskStates.ALL))
                .compose(ids -> tasks.open(caller, ids, afterEventId, sink));
    }

    private Future<FlowRecord> visible(Caller caller, UUID id) {
        return journal.get(id).map(flow -> {
            if (flow == null || !caller.sees(flow.tenant())) {
                throw new NotFoundException("flow", id);
            }
            return flow;
        });
    }

    /** The names of every state, for reading all of a flow's tasks. */
    private static final class TaskStates {
        static final String[] ALL =
                java.util.Arrays.stream(TaskState.values()).map(TaskState::sql).toArray(String[]::new);
    }
}
