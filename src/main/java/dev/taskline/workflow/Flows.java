package dev.taskline.workflow;

import dev.taskline.admission.Admission;
import dev.taskline.admission.Idempotency;
import dev.taskline.admission.Placement;
import dev.taskline.admission.Submission;
import dev.taskline.config.TasklineConfig;
import dev.taskline.journal.JournalFlows;
import dev.taskline.metrics.FlowMeters;
import dev.taskline.model.FlowAccepted;
import dev.taskline.model.FlowInsert;
import dev.taskline.model.Insert;
import dev.taskline.model.TaskIds;
import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Accepts flows: reads the graph, checks each task as any task is checked, takes room in their
 * queues for the roots as a batch does, and journals the whole flow in one statement (with its
 * Idempotency-Key, when it has one) before answering. Nothing of a refused flow is journaled.
 */
public final class Flows {

    private final Admission admission;
    private final JournalFlows journal;
    private final BlockedCount blocked;
    private final TasklineConfig.Flows config;
    private final FlowMeters meters;
    private final Clock clock;
    private final Idempotency idempotency;

    public Flows(
            Admission admission,
            JournalFlows journal,
            BlockedCount blocked,
            TasklineConfig.Flows config,
            FlowMeters meters,
            Clock clock) {
        this.admission = admission;
        this.journal = journal;
        this.blocked = blocked;
        this.config = config;
        this.meters = meters;
        this.clock = clock;
        this.idempotency = admission.idempotency();
    }

    /**
     * Accepts the flow {@code body} describes for {@code tenant} (null: none), all or nothing; under
     * {@code idempotencyKey} (null: none) a second request with the same body gets the first one's
     * answer, and one with another body 409.
     */
    public Future<FlowAccepted> submit(JsonObject body, String idempotencyKey, String tenant) {
        FlowSpec spec;
        try {
            Idempotency.check(idempotencyKey);
            spec = FlowJson.read(body, config.maxTasks());
            FlowRules.check(spec, config.maxTasks());
        } catch (InvalidTaskException e) {
            return Future.failedFuture(e);
        }
        if (idempotencyKey == null) {
            return admit(spec, tenant, null);
        }
        Idempotency.Keyed keyed = idempotency.keyed(
                Idempotency.Kind.FLOW,
                tenant,
                idempotencyKey,
                "flow",
                spec.canonical().encode());
        return keyed.answer(
                journalKey -> journal.storedAnswer(journalKey)
                        .map(stored -> stored.containsKey("answer") ? earlier(stored, tenant) : null),
                () -> admit(spec, tenant, keyed));
    }

    /**
     * What a flow key's first request left ({@link JournalFlows#storedAnswer}), as {@link
     * Idempotency} compares it: without an answer of a flow's form it matches no request.
     */
    private static Idempotency.Earlier<FlowAccepted> earlier(JsonObject stored, String tenant) {
        return stored.getValue("answer") instanceof JsonObject answer
                ? new Idempotency.Earlier<>(stored.getString("requestHash"), FlowAccepted.replayed(answer, tenant))
                : new Idempotency.Earlier<>(null, null);
    }

    /** Admits the flow, under {@code keyed} (null: no key). */
    private Future<FlowAccepted> admit(FlowSpec spec, String tenant, Idempotency.Keyed keyed) {
        int n = spec.tasks().size();
        int blockedTasks = n - spec.roots().size();
        if (blockedTasks > 0 && !blocked.room(blockedTasks, tenant)) {
            return Future.failedFuture(blocked.refusal(blockedTasks, tenant));
        }
        UUID flowId = TaskIds.next(clock);
        List<Submission> submissions = new ArrayList<>(n);
        List<Placement> places = new ArrayList<>(n);
        for (FlowTask task : spec.tasks()) {
            submissions.add(task.submission());
            places.add(Placement.flow(flowId, task.key(), !task.root()));
        }
        return admission.admitFlow(
                submissions,
                places,
                tenant,
                i -> where(spec, i),
                inserts -> {
                    FlowInsert flow = flow(spec, flowId, tenant, inserts);
                    FlowAccepted accepted = accepted(flow);
                    Future<FlowAccepted> written = keyed == null
                            ? journal.insert(flow).map(accepted)
                            // A racing twin may have taken the key first: its answer is ours, if it asked the same.
                            : journal.insertIdempotent(
                                            keyed.journalKey(),
                                            keyed.requestHash(),
                                            flow,
                                            accepted.stored(),
                                            keyed.keepFor())
                                    .map(lost -> lost == null ? accepted : keyed.replay(earlier(lost, tenant)));
                    // Counted once journaled, here where the tasks' queues are known; a replay journaled nothing.
                    return written.map(answer -> {
                        if (!answer.replayed()) {
                            blocked.admitted(blockedTasks, tenant, blockedByQueue(inserts, spec));
                            meters.started();
                        }
                        return answer;
                    });
                },
                answer -> !answer.replayed());
    }

    private static Map<String, Integer> blockedByQueue(List<Insert> inserts, FlowSpec spec) {
        Map<String, Integer> byQueue = new HashMap<>();
        for (int i = 0; i < inserts.size(); i++) {
            if (!spec.tasks().get(i).root()) {
                byQueue.merge(inserts.get(i).task().queue(), 1, Integer::sum);
            }
        }
        return byQueue;
    }

    private static String where(FlowSpec spec, int i) {
        return "tasks[" + i + "] (key '" + spec.tasks().get(i).key() + "').";
    }

    /** The flow as the journal takes it: its tasks in the order given, each with its edges' ends. */
    private static FlowInsert flow(FlowSpec spec, UUID flowId, String tenant, List<Insert> inserts) {
        Map<String, UUID> ids = new HashMap<>();
        for (int i = 0; i < inserts.size(); i++) {
            ids.put(spec.tasks().get(i).key(), inserts.get(i).task().id());
        }
        List<FlowInsert.Node> nodes = new ArrayList<>(inserts.size());
        for (int i = 0; i < inserts.size(); i++) {
            FlowTask task = spec.tasks().get(i);
            nodes.add(new FlowInsert.Node(
                    inserts.get(i),
                    task.key(),
                    task.root() ? null : task.join().sql(),
                    task.dependsOn().size(),
                    task.root() ? null : task.submission().startWithinMs()));
        }
        return new FlowInsert(flowId, spec.name(), tenant, nodes, spec.edges(ids));
    }

    private static FlowAccepted accepted(FlowInsert flow) {
        List<FlowAccepted.Member> members = new ArrayList<>(flow.tasks().size());
        for (FlowInsert.Node node : flow.tasks()) {
            String state = !node.root() ? "blocked" : node.insert().claimed() ? "running" : "pending";
            members.add(new FlowAccepted.Member(node.key(), node.insert().task().id(), state));
        }
        return new FlowAccepted(flow.id(), flow.tenant(), members, false);
    }
}
