package dev.taskline.workflow;

import dev.taskline.model.FlowInsert;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Collections;
import java.util.HashMap;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * A flow as {@link FlowJson} read it: an optional name and its tasks in the order the body gave
 * them (for a shorthand, depth first). A flow read by {@link FlowJson} has unique keys, no unknown
 * parent and no cycle; on one made by hand that breaks those, {@link #children()} and {@link
 * #topological()} throw {@link IllegalStateException}.
 */
public record FlowSpec(String name, List<FlowTask> tasks) {

    public FlowSpec {
        tasks = List.copyOf(tasks);
    }

    /** The tasks that depend on none, which start the flow. */
    /** Each task's dependsOn as edges, parent to child, the keys given as the ids {@code ids} maps them to. */
    public List<FlowInsert.Edge> edges(Map<String, UUID> ids) {
        List<FlowInsert.Edge> edges = new ArrayList<>();
        for (FlowTask task : tasks) {
            UUID child = ids.get(task.key());
            for (String parent : task.dependsOn()) {
                edges.add(new FlowInsert.Edge(ids.get(parent), child));
            }
        }
        return edges;
    }

    public List<FlowTask> roots() {
        return tasks.stream().filter(FlowTask::root).toList();
    }

    /** Every task's key, in the order given, to the keys of the tasks that depend on it (in the order given). */
    public Map<String, List<String>> children() {
        Map<String, List<String>> children = new LinkedHashMap<>();
        for (FlowTask task : tasks) {
            children.put(task.key(), new ArrayList<>());
        }
        for (FlowTask task : tasks) {
            for (String parent : task.dependsOn()) {
                List<String> of = children.get(parent);
                if (of == null) {
                    throw new IllegalStateException(task.key() + " depends on " + parent + ", not a task of the flow");
                }
                of.add(task.key());
            }
        }
        children.replaceAll((key, keys) -> Collections.unmodifiableList(keys));
        return Collections.unmodifiableMap(children);
    }

    /** The tasks with parents before children; of the tasks ready at once, the first given goes first. */
    public List<FlowTask> topological() {
        int[] order = FlowGraph.order(parents());
        if (order == null) {
            throw new IllegalStateException("the flow's tasks depend on each other in a cycle");
        }
        List<FlowTask> sorted = new ArrayList<>(order.length);
        for (int position : order) {
            sorted.add(tasks.get(position));
        }
        return List.copyOf(sorted);
    }

    /**
     * The flow as canonical JSON (keys sorted, absent fields left out), for comparing idempotent
     * requests: the same body always gives the same JSON. Tasks keep their order and their
     * dependsOn theirs, since both are what the body said, not a normal form of the graph.
     */
    public JsonObject canonical() {
        JsonArray array = new JsonArray();
        for (FlowTask task : tasks) {
            // Keys put in sorted order, as admission's Canonical would sort them.
            array.add(new JsonObject()
                    .put("dependsOn", new JsonArray(new ArrayList<Object>(task.dependsOn())))
                    .put("join", task.join().sql())
                    .put("key", task.key())
                    .put("submission", task.submission().canonical()));
        }
        JsonObject json = new JsonObject();
        if (name != null) {
            json.put("name", name);
        }
        return json.put("tasks", array);
    }

    private int[][] parents() {
        Map<String, Integer> positions = new HashMap<>();
        for (int i = 0; i < tasks.size(); i++) {
            if (positions.put(tasks.get(i).key(), i) != null) {
                throw new IllegalStateException(
                        "two tasks of the flow have key " + tasks.get(i).key());
            }
        }
        int[][] parents = new int[tasks.size()][];
        for (int i = 0; i < tasks.size(); i++) {
            List<String> dependsOn = tasks.get(i).dependsOn();
            parents[i] = new int[dependsOn.size()];
            for (int j = 0; j < dependsOn.size(); j++) {
                Integer parent = positions.get(dependsOn.get(j));
                if (parent == null) {
                    throw new IllegalStateException(
                            tasks.get(i).key() + " depends on " + dependsOn.get(j) + ", not a task of the flow");
                }
                parents[i][j] = parent;
            }
        }
        return parents;
    }
}
