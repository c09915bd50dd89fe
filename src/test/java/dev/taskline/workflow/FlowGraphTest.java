package dev.taskline.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.admission.Submission;
import io.vertx.core.json.JsonObject;
import java.util.Arrays;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A flow's graph: its roots, each task's children, a topological order, and the cycle finder under them. */
class FlowGraphTest {

    private static final Submission TASK =
            new Submission("t", new JsonObject(), null, null, null, null, null, null, null, null, null);

    private static FlowTask task(String key, String... dependsOn) {
        return new FlowTask(key, TASK, List.of(dependsOn), Join.ALL);
    }

    private static List<String> keys(List<FlowTask> tasks) {
        return tasks.stream().map(FlowTask::key).toList();
    }

    @Test
    void the_topological_order_puts_parents_first_and_otherwise_keeps_the_given_order() {
        FlowSpec given =
                new FlowSpec("f", List.of(task("c", "b"), task("a"), task("b", "a"), task("d"), task("e", "c", "d")));
        assertEquals(List.of("a", "b", "c", "d", "e"), keys(given.topological()));
        FlowSpec diamond = new FlowSpec(
                null, List.of(task("top"), task("left", "top"), task("right", "top"), task("bottom", "right", "left")));
        assertEquals(List.of("top", "left", "right", "bottom"), keys(diamond.topological()));
        FlowSpec readyLate = new FlowSpec(null, List.of(task("x"), task("y", "z"), task("z", "x"), task("w")));
        assertEquals(
                List.of("x", "z", "y", "w"),
                keys(readyLate.topological()),
                "w is ready from the start but y, given first, goes first once z is placed");
    }

    @Test
    void roots_are_the_tasks_without_parents_in_the_given_order() {
        FlowSpec flow = new FlowSpec(null, List.of(task("b", "a"), task("a"), task("c"), task("d", "c", "a")));
        assertEquals(List.of("a", "c"), keys(flow.roots()));
    }

    @Test
    void children_maps_every_key_to_the_keys_that_depend_on_it() {
        FlowSpec flow = new FlowSpec(null, List.of(task("b", "a"), task("a"), task("c"), task("d", "c", "a")));
        Map<String, List<String>> expected = new LinkedHashMap<>();
        expected.put("b", List.of());
        expected.put("a", List.of("b", "d"));
        expected.put("c", List.of("d"));
        expected.put("d", List.of());
        Map<String, List<String>> children = flow.children();
        assertEquals(expected, children);
        assertEquals(List.of("b", "a", "c", "d"), List.copyOf(children.keySet()));
        assertThrows(
                UnsupportedOperationException.class, () -> children.get("a").add("x"));
    }

    @Test
    void a_flow_made_by_hand_with_a_cycle_or_an_unknown_parent_has_no_order() {
        FlowSpec cycle = new FlowSpec(null, List.of(task("a", "b"), task("b", "a")));
        assertThrows(IllegalStateException.class, cycle::topological);
        FlowSpec unknown = new FlowSpec(null, List.of(task("a", "x")));
        assertThrows(IllegalStateException.class, unknown::topological);
        assertThrows(IllegalStateException.class, unknown::children);
    }

    @Test
    void a_task_s_dependson_is_never_null_and_holds_each_key_once_in_the_order_given() {
        FlowTask root = new FlowTask("r", TASK, null, Join.ANY);
        assertEquals(List.of(), root.dependsOn());
        assertTrue(root.root());
        FlowTask task = new FlowTask("t", TASK, List.of("b", "a", "b", "c", "a"), Join.ALL);
        assertEquals(List.of("b", "a", "c"), task.dependsOn());
        assertFalse(task.root());
    }

    @Test
    void joins_have_the_names_the_api_and_the_journal_use() {
        assertEquals(
                List.of("all", "settled", "any"),
                Arrays.stream(Join.values()).map(Join::sql).toList());
        for (Join join : Join.values()) {
            assertEquals(join, Join.parse(join.sql()));
        }
        assertNull(Join.parse("ALL"));
        assertNull(Join.parse("first"));
        assertNull(Join.parse(null));
    }

    @Test
    void the_cycle_finder_follows_parents_from_the_first_stuck_task_and_starts_at_the_cycle_s_first_task() {
        // 0 is stuck behind the cycle 3 -> 1 -> 2 -> 3 without being on it; 4 is free.
        int[][] parents = {{1}, {2}, {3}, {1}, {}};
        assertNull(FlowGraph.order(parents));
        assertEquals(List.of(1, 2, 3), FlowGraph.cycle(parents));
        int[][] acyclic = {{1}, {}, {0, 1}};
        assertEquals(
                List.of(1, 0, 2),
                Arrays.stream(FlowGraph.order(acyclic)).boxed().toList());
        assertEquals(List.of(), FlowGraph.cycle(acyclic));
    }

    @Test
    void a_long_chain_and_a_long_cycle_need_no_deep_stack() {
        int n = 200_000;
        int[][] chain = new int[n][];
        chain[0] = new int[0];
        for (int i = 1; i < n; i++) {
            chain[i] = new int[] {i - 1};
        }
        assertEquals(n - 1, FlowGraph.order(chain)[n - 1]);
        chain[0] = new int[] {n - 1};
        assertNull(FlowGraph.order(chain));
        assertEquals(n, FlowGraph.cycle(chain).size());
    }
}
