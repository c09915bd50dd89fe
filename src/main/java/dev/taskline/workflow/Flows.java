package dev.taskline.workflow;

import dev.taskline.admission.Admission;
import dev.taskline.admission.Canonical;
import dev.taskline.admission.Idempotency;
import dev.taskline.admission.Submission;
import dev.taskline.config.TasklineConfig;
import dev.taskline.journal.JournalFlows;
import dev.taskline.metrics.FlowMeters;
import dev.taskline.model.FlowAccepted;
import dev.taskline.model.FlowInsert;
import dev.taskline.model.Insert;
import dev.taskline.model.TaskIds;
import dev.taskline.model.problem.IdempotencyConflictException;
import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Clock;
import java.time.Duration;
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
    private final Duration keepKeysFor;

    public Flows(
            Admission admission,
            JournalFlows journal,
            BlockedCount blocked,
            TasklineConfig.Flows config,
            FlowMeters meters,
            Clock clock,
            Duration keepKeysFor) {
        this.admission = admission;
        this.journal = journal;
        this.blocked = blocked;
        this.config = config;
        this.meters = meters;
        this.clock = clock;
        this.keepKeysFor = keepKeysFor;
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
            return admit(spec, tenant, null, null, null);
        }
        String hash = Canonical.sha256("flow:" + (tenant == null ? "" : "tenant=" + tenant + ":")
                + spec.canonical().encode());
        String journalKey = Idempotency.journalKey(Idempotency.Kind.FLOW, tenant, idempotencyKey);
        return journal.storedAnswer(journalKey).compose(earlier -> {
            if (earlier.containsKey("answer")) {
                return Future.succeededFuture(replay(idempotencyKey, hash, earlier, tenant));
            }
            return Idempotency.orTwin(
                    admit(spec, tenant, idempotencyKey, journalKey, hash),
                    () -> journal.storedAnswer(journalKey)
                            .map(twin ->
                                    twin.containsKey("answer") ? replay(idempotencyKey, hash, twin, tenant) : null));
        });
    }

    private FlowAccepted replay(String key, String hash, JsonObject earlier, String tenant) {
        if (!hash.equals(earlier.getString("requestHash")) || !(earlier.getValue("answer") instanceof JsonObject)) {
            throw new IdempotencyConflictException(key);
        }
        return FlowAccepted.replayed(earlier.getJsonObject("answer"), tenant);
    }

    private Future<FlowAccepted> admit(
            FlowSpec spec, String tenant, String idempotencyKey, String journalKey, String hash) {
        int n = spec.tasks().size();
        List<Submission> submissions = new ArrayList<>(n);
        boolean[] root = new boolean[n];
        for (int i = 0; i < n; i++) {
            FlowTask task = spec.tasks().get(i);
            submissions.add(task.submission());
            root[i] = task.root();
        }
        int blockedTasks = n - spec.roots().size();
        if (blockedTasks > 0 && !blocked.room(blockedTasks, tenant)) {
            return Future.failedFuture(blocked.refusal(blockedTasks, tenant));
        }
        UUID flowId = TaskIds.next(clock);
        JsonObject[] answer = new JsonObject[1];
        FlowAccepted[] accepted = new FlowAccepted[1];
        return admission
                .admitFlow(submissions, root, flowId, keys(spec), tenant, i -> where(spec, i), inserts -> {
                    FlowInsert flow = flow(spec, flowId, tenant, inserts);
                    accepted[0] = accepted(flow);
                    if (journalKey == null) {
                        return journal.insert(flow).map(true);
                    }
                    return journal.insertIdempotent(journalKey, hash, flow, accepted[0].stored(), keepKeysFor)
                            .map(earlier -> {
                                answer[0] = earlier;
                                return earlier == null;
                            });
                })
                .map(inserts -> {
                    if (answer[0] != null) {
                        // A racing twin took the key first: its answer is ours, if it asked the same.
                        return replay(idempotencyKey, hash, answer[0], tenant);
                    }
                    blocked.admitted(blockedTasks, tenant, blockedByQueue(inserts, root));
                    meters.started();
                    return accepted[0];
                });
    }

    private static Map<String, Integer> blockedByQueue(List<Insert> inserts, boolean[] root) {
        Map<String, Integer> byQueue = new HashMap<>();
        for (int i = 0; i < inserts.size(); i++) {
            if (!root[i]) {
                byQueue.merge(inserts.get(i).task().queue(), 1, Integer::sum);
            }
        }
        return byQueue;
    }

    private static List<String> keys(FlowSpec spec) {
        return spec.tasks().stream().map(FlowTask::key).toList();
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
