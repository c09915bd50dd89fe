package dev.taskline.workflow;

import dev.taskline.admission.Admission;
import dev.taskline.admission.Placement;
import dev.taskline.model.FlowInsert;
import dev.taskline.model.Insert;
import dev.taskline.model.Spawn;
import dev.taskline.model.SpawnPlanner;
import dev.taskline.model.StoredJson;
import dev.taskline.model.Task;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.TenantLimitException;
import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * Reads what a running flow task spawns: task objects as a flow's {@code tasks} takes them, each
 * with an optional key (by default the spawner's key and its place, {@code fetch.0}), dependsOn
 * (other tasks of the same spawn) and join. Each waits for the spawner; the spawner's dependents
 * wait for the spawned tasks no other spawned task depends on. A spawned task, like any that waits
 * for a parent, takes delayMs and startWithinMs, counted from when it may run, but no runAt or
 * startBy.
 *
 * <p>A spawn is held to what a submitted flow is: its tasks to their queues' tenant limits and to the
 * tenant's share of blocked tasks here (429 while they are full), and the whole flow, however many
 * generations spawned its tasks, to {@code flows.maxTasks} and its edge cap, which the journal checks
 * in the transaction that writes the spawn (422: the same code would spawn the same again).
 */
public final class Spawns implements SpawnPlanner {

    private final Admission admission;
    private final BlockedCount blocked;
    private final int maxTasks;

    public Spawns(Admission admission, BlockedCount blocked, int maxTasks) {
        this.admission = admission;
        this.blocked = blocked;
        this.maxTasks = maxTasks;
    }

    /** The key the {@code i}th spawned task of {@code spawner} gets when it gives none. */
    public static String defaultKey(String spawnerKey, int i) {
        return spawnerKey + "." + i;
    }

    @Override
    public Future<Spawn> plan(Task spawner, JsonArray tasks) {
        try {
            Spawn spawn = read(spawner, tasks);
            List<Insert> inserts =
                    spawn.tasks().stream().map(FlowInsert.Node::insert).toList();
            admission.fitSpawned(inserts, spawner.tenant());
            int n = inserts.size();
            if (!blocked.room(n, spawner.tenant())) {
                return Future.failedFuture(blocked.refusal(n, spawner.tenant()));
            }
            // Counted now: a spawn that does not land is counted until the next read of the journal.
            Map<String, Integer> byQueue = new HashMap<>();
            inserts.forEach(i -> byQueue.merge(i.task().queue(), 1, Integer::sum));
            blocked.admitted(n, spawner.tenant(), byQueue);
            return Future.succeededFuture(spawn);
        } catch (InvalidTaskException | TenantLimitException e) {
            return Future.failedFuture(e);
        }
    }

    private Spawn read(Task spawner, JsonArray tasks) {
        if (spawner.flowId() == null) {
            throw new InvalidTaskException("spawn: only a task of a flow may add tasks to it");
        }
        if (tasks.isEmpty() || tasks.size() > maxTasks) {
            throw new InvalidTaskException("spawn: from 1 to " + maxTasks + " tasks, got " + tasks.size());
        }
        // A local handler's or a push target's spawn never passed a request's checks: what the journal
        // cannot keep (a NUL, a lone surrogate) is refused here, as it would be from a remote worker.
        String flaw = StoredJson.flaw(tasks, "spawn");
        if (flaw != null) {
            throw new InvalidTaskException(flaw);
        }
        JsonArray keyed = new JsonArray();
        for (int i = 0; i < tasks.size(); i++) {
            if (!(tasks.getValue(i) instanceof JsonObject task)) {
                throw new InvalidTaskException("spawn[" + i + "] must be an object");
            }
            JsonObject copy = task.copy();
            if (!copy.containsKey("key")) {
                copy.put("key", defaultKey(spawner.flowKey(), i));
            }
            keyed.add(copy);
        }
        FlowSpec spec;
        try {
            spec = FlowJson.read(new JsonObject().put("tasks", keyed), maxTasks);
        } catch (InvalidTaskException e) {
            throw new InvalidTaskException("spawn: " + e.getMessage());
        }
        Map<String, UUID> ids = new HashMap<>();
        List<FlowInsert.Node> nodes = new ArrayList<>();
        List<Long> delays = new ArrayList<>();
        for (int i = 0; i < spec.tasks().size(); i++) {
            FlowTask task = spec.tasks().get(i);
            String where = "spawn[" + i + "] (key '" + task.key() + "').";
            if (task.submission().runAt() != null || task.submission().startBy() != null) {
                throw new InvalidTaskException(where + "a spawned task waits for its spawner and takes no runAt or"
                        + " startBy; give delayMs or startWithinMs, counted from when it may run");
            }
            Insert insert = admission.spawned(
                    task.submission(), where, spawner.tenant(), Placement.flow(spawner.flowId(), task.key(), true));
            ids.put(task.key(), insert.task().id());
            nodes.add(new FlowInsert.Node(
                    insert,
                    task.key(),
                    task.join().sql(),
                    1 + task.dependsOn().size(),
                    task.submission().startWithinMs()));
            delays.add(
                    task.submission().delayMs() == null ? 0L : task.submission().delayMs());
        }
        List<FlowInsert.Edge> edges = new ArrayList<>();
        List<UUID> tails = new ArrayList<>();
        Map<String, List<String>> children = spec.children();
        for (FlowTask task : spec.tasks()) {
            edges.add(new FlowInsert.Edge(spawner.id(), ids.get(task.key())));
            if (children.get(task.key()).isEmpty()) {
                tails.add(ids.get(task.key()));
            }
        }
        edges.addAll(spec.edges(ids));
        return new Spawn(
                spawner.flowId(),
                spawner.id(),
                nodes,
                delays,
                edges,
                tails,
                new Spawn.Budget(maxTasks, FlowRules.maxEdges(maxTasks), maxTasks));
    }
}
