package dev.taskline.workflow;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertNotEquals;
import static org.junit.jupiter.api.Assertions.assertNull;
import static org.junit.jupiter.api.Assertions.assertThrows;
import static org.junit.jupiter.api.Assertions.assertTrue;

import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.Collections;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import org.junit.jupiter.api.Test;

/** A flow's body read into tasks and edges, each shorthand's keys and edges exact, and every refusal. */
class FlowJsonTest {

    private static final int MAX = 100;

    /** JSON written with single quotes, to keep the bodies readable here. */
    private static JsonObject json(String text) {
        return new JsonObject(text.replace('\'', '"'));
    }

    private static FlowSpec read(String text) {
        return FlowJson.read(json(text), MAX);
    }

    private static String refused(String text) {
        return refused(json(text), MAX);
    }

    private static String refused(JsonObject body, int maxTasks) {
        InvalidTaskException e = assertThrows(InvalidTaskException.class, () -> FlowJson.read(body, maxTasks));
        assertEquals(422, e.status());
        return e.getMessage();
    }

    private static void assertRefused(String text, String message) {
        assertEquals(message, refused(text));
    }

    /** Each key, in the flow's order, to its dependsOn. */
    private static Map<String, List<String>> edges(FlowSpec flow) {
        Map<String, List<String>> edges = new LinkedHashMap<>();
        flow.tasks().forEach(task -> edges.put(task.key(), task.dependsOn()));
        return edges;
    }

    private static List<String> keys(FlowSpec flow) {
        return flow.tasks().stream().map(FlowTask::key).toList();
    }

    private static void assertEdges(FlowSpec flow, Object... keyThenParents) {
        Map<String, List<String>> expected = new LinkedHashMap<>();
        for (int i = 0; i < keyThenParents.length; i += 2) {
            @SuppressWarnings("unchecked")
            List<String> parents = (List<String>) keyThenParents[i + 1];
            expected.put((String) keyThenParents[i], parents);
        }
        assertEquals(List.copyOf(expected.keySet()), keys(flow), "the keys, in order");
        assertEquals(expected, edges(flow));
    }

    // --- the explicit form

    @Test
    void the_tasks_form_keeps_keys_edges_joins_and_the_tasks_own_fields() {
        FlowSpec flow = read("""
                {'name': 'nightly', 'tasks': [
                  {'key': 'fetch', 'type': 'http.get', 'payload': {'url': 'u'}, 'priority': 5},
                  {'key': 'parse', 'type': 'parse', 'dependsOn': ['fetch', 'fetch']},
                  {'key': 'report', 'type': 'mail', 'dependsOn': ['parse', 'fetch'], 'join': 'settled',
                   'queue': 'slow', 'maxAttempts': 3}
                ]}""");
        assertEquals("nightly", flow.name());
        assertEdges(flow, "fetch", List.of(), "parse", List.of("fetch"), "report", List.of("parse", "fetch"));
        FlowTask fetch = flow.tasks().get(0);
        assertEquals("http.get", fetch.submission().type());
        assertEquals(new JsonObject().put("url", "u"), fetch.submission().payload());
        assertEquals(5, fetch.submission().priority());
        assertEquals(Join.ALL, fetch.join());
        FlowTask report = flow.tasks().get(2);
        assertEquals(Join.SETTLED, report.join());
        assertEquals("slow", report.submission().queue());
        assertEquals(3, report.submission().maxAttempts());
        assertNull(report.submission().priority());
    }

    @Test
    void a_task_may_depend_on_one_given_after_it_and_join_any() {
        FlowSpec flow = read(
                "{'tasks': [{'key': 'b', 'type': 't', 'dependsOn': ['a'], 'join': 'any'}, {'key': 'a', 'type': 't'}]}");
        assertEdges(flow, "b", List.of("a"), "a", List.of());
        assertEquals(Join.ANY, flow.tasks().get(0).join());
        assertNull(flow.name());
    }

    @Test
    void the_tasks_form_requires_a_key() {
        assertRefused(
                "{'tasks': [{'key': 'a', 'type': 't'}, {'type': 't'}]}",
                "tasks[1].key is required: a string matching [A-Za-z0-9._:-]{1,128}");
    }

    // --- shorthands

    @Test
    void a_chain_names_its_tasks_by_index_and_runs_them_one_after_the_other() {
        FlowSpec flow = read("{'name': 'c', 'chain': [{'type': 'a'}, {'type': 'b'}, {'type': 'c'}]}");
        assertEquals("c", flow.name());
        assertEdges(flow, "0", List.of(), "1", List.of("0"), "2", List.of("1"));
        assertEquals("b", flow.tasks().get(1).submission().type());
    }

    @Test
    void a_group_has_no_edges() {
        FlowSpec flow = read("{'group': [{'type': 'a'}, {'type': 'b'}, {'type': 'c'}]}");
        assertEdges(flow, "0", List.of(), "1", List.of(), "2", List.of());
    }

    @Test
    void a_chord_runs_then_after_every_member_of_its_group() {
        FlowSpec flow = read("{'chord': {'group': [{'type': 'x'}, {'type': 'y'}], 'then': {'type': 't'}}}");
        assertEdges(flow, "0", List.of(), "1", List.of(), "then", List.of("0", "1"));
        assertEquals("t", flow.tasks().get(2).submission().type());
    }

    @Test
    void a_group_in_a_chain_is_named_under_its_index_and_fans_out_and_in() {
        FlowSpec flow = read("{'chain': [{'type': 'a'}, {'group': [{'type': 'b'}, {'type': 'c'}]}, {'type': 'd'}]}");
        assertEdges(flow, "0", List.of(), "1.0", List.of("0"), "1.1", List.of("0"), "2", List.of("1.0", "1.1"));
    }

    @Test
    void a_chord_in_a_chain_is_named_under_its_index() {
        FlowSpec flow = read("""
                {'chain': [{'type': 'a'},
                           {'chord': {'group': [{'type': 'b'}, {'type': 'c'}], 'then': {'type': 'd'}}},
                           {'type': 'e'}]}""");
        assertEdges(
                flow,
                "0",
                List.of(),
                "1.0",
                List.of("0"),
                "1.1",
                List.of("0"),
                "1.then",
                List.of("1.0", "1.1"),
                "2",
                List.of("1.then"));
    }

    @Test
    void a_chord_whose_then_is_a_chain_links_the_group_to_its_head_only() {
        FlowSpec flow = read("""
                {'chord': {'group': [{'type': 'x'}, {'type': 'y'}],
                           'then': {'chain': [{'type': 'p'}, {'type': 'q'}]}}}""");
        assertEdges(flow, "0", List.of(), "1", List.of(), "then.0", List.of("0", "1"), "then.1", List.of("then.0"));
    }

    @Test
    void a_chord_over_chains_waits_for_each_chain_s_tail() {
        FlowSpec flow = read("""
                {'chord': {'group': [{'chain': [{'type': 'a'}, {'type': 'b'}]},
                                     {'chain': [{'type': 'c'}, {'type': 'd'}]}],
                           'then': {'group': [{'type': 'e'}, {'type': 'f'}]}}}""");
        assertEdges(
                flow,
                "0.0",
                List.of(),
                "0.1",
                List.of("0.0"),
                "1.0",
                List.of(),
                "1.1",
                List.of("1.0"),
                "then.0",
                List.of("0.1", "1.1"),
                "then.1",
                List.of("0.1", "1.1"));
    }

    @Test
    void a_chain_of_groups_links_every_tail_to_every_head_and_a_chain_of_chains_end_to_start() {
        FlowSpec groups = read(
                "{'chain': [{'group': [{'type': 'a'}, {'type': 'b'}]}, {'group': [{'type': 'c'}, {'type': 'd'}]}]}");
        assertEdges(
                groups, "0.0", List.of(), "0.1", List.of(), "1.0", List.of("0.0", "0.1"), "1.1", List.of("0.0", "0.1"));
        FlowSpec chains = read(
                "{'chain': [{'chain': [{'type': 'a'}, {'type': 'b'}]}, {'chain': [{'type': 'c'}, {'type': 'd'}]}]}");
        assertEdges(chains, "0.0", List.of(), "0.1", List.of("0.0"), "1.0", List.of("0.1"), "1.1", List.of("1.0"));
    }

    @Test
    void a_task_in_a_shorthand_keeps_the_key_it_gives() {
        FlowSpec flow =
                read("{'chain': [{'key': 'fetch', 'type': 'a'}, {'type': 'b'}, {'key': 'store', 'type': 'c'}]}");
        assertEdges(flow, "fetch", List.of(), "1", List.of("fetch"), "store", List.of("1"));
    }

    @Test
    void a_task_in_a_shorthand_may_add_edges_of_its_own_after_the_shorthand_s_and_choose_its_join() {
        FlowSpec flow = read("""
                {'group': [{'chord': {'group': [{'key': 'a', 'type': 't'},
                                                {'key': 'b', 'type': 't', 'dependsOn': ['y']}],
                                      'then': {'key': 'c', 'type': 't', 'dependsOn': ['y', 'a'], 'join': 'settled'}}},
                           {'key': 'y', 'type': 't'}]}""");
        // c depends on a and b by the chord; its own dependsOn adds y, and a only once.
        assertEdges(flow, "a", List.of(), "b", List.of("y"), "c", List.of("a", "b", "y"), "y", List.of());
        assertEquals(Join.SETTLED, flow.tasks().get(2).join());
        assertEquals(Join.ALL, flow.tasks().get(1).join());
    }

    @Test
    void shorthands_nest_32_deep_and_no_deeper() {
        FlowSpec flow = FlowJson.read(nested(32), MAX);
        assertEquals(List.of(String.join(".", Collections.nCopies(32, "0"))), keys(flow));
        String message = refused(nested(33), MAX);
        assertTrue(message.endsWith(": shorthands nest at most 32 deep"), message);
        assertTrue(message.startsWith("chain[0].chain[0]."), message);
    }

    /** A chain in a chain ... {@code depth} deep, around one task. */
    private static JsonObject nested(int depth) {
        JsonObject element = new JsonObject().put("type", "t");
        for (int i = 0; i < depth; i++) {
            element = new JsonObject().put("chain", new JsonArray().add(element));
        }
        return element;
    }

    @Test
    void a_key_a_position_would_make_longer_than_128_characters_must_be_given() {
        JsonObject element = new JsonObject().put("type", "t");
        for (int i = 0; i < 30; i++) {
            element = new JsonObject()
                    .put(
                            "chord",
                            new JsonObject()
                                    .put("group", new JsonArray().add(new JsonObject().put("type", "g")))
                                    .put("then", element));
        }
        String message = refused(element, MAX);
        assertTrue(message.contains(": the key its position would give it, 'then.then.then."), message);
        assertTrue(message.endsWith("is longer than 128 characters; give it a key"), message);
    }

    // --- refusals

    @Test
    void the_body_must_be_an_object_of_known_fields_giving_one_form() {
        assertEquals("the body must be a JSON object describing a flow", refused((JsonObject) null, MAX));
        assertTrue(refused("{'tasks': [], 'steps': 1}")
                .startsWith("steps is not a known field (known: chain, chord, group, name, tasks)"));
        assertRefused("{'name': 'x'}", "a flow gives exactly one of tasks, chain, group, chord");
        assertRefused(
                "{'chain': [{'type': 't'}], 'group': [{'type': 't'}]}",
                "a flow gives exactly one of tasks, chain, group, chord (this one gives chain, group)");
    }

    @Test
    void the_name_is_a_string_of_1_to_200_characters() {
        String rule = "name must be a string of 1 to 200 characters";
        assertRefused("{'name': 3, 'chain': [{'type': 't'}]}", rule);
        assertRefused("{'name': '', 'chain': [{'type': 't'}]}", rule);
        assertRefused("{'name': '" + "n".repeat(201) + "', 'chain': [{'type': 't'}]}", rule);
        assertEquals(
                "n".repeat(200),
                read("{'name': '" + "n".repeat(200) + "', 'chain': [{'type': 't'}]}")
                        .name());
    }

    @Test
    void each_part_must_have_its_json_type() {
        assertRefused("{'tasks': {}}", "tasks must be an array of task objects");
        assertRefused("{'tasks': [{'key': 'a', 'type': 't'}, 'b']}", "tasks[1] must be an object");
        assertRefused("{'chain': {}}", "chain must be an array of tasks and shorthands");
        assertRefused(
                "{'chain': [{'type': 't'}, 2]}", "chain[1] must be an object: a task, or a chain, group or chord");
        assertRefused("{'chord': []}", "chord must be an object with group and then");
        assertRefused("{'chord': {'then': {'type': 't'}}}", "chord.group must be an array of tasks and shorthands");
        assertRefused(
                "{'chord': {'group': [{'type': 't'}]}}", "chord.then is required: a task, or a chain, group or chord");
        assertRefused(
                "{'chord': {'group': [{'type': 't'}], 'then': 'x'}}",
                "chord.then must be an object: a task, or a chain, group or chord");
        assertTrue(refused("{'chord': {'group': [{'type': 't'}], 'then': {'type': 't'}, 'else': {}}}")
                .startsWith("chord.else is not a known field (known: group, then)"));
        assertRefused(
                "{'tasks': [{'key': 'a', 'type': 't', 'dependsOn': 'b'}]}",
                "tasks[0].dependsOn must be an array of key strings");
        assertRefused(
                "{'chain': [{'type': 't'}, {'group': [{'type': 't', 'dependsOn': ['0', 1]}]}]}",
                "chain[1].group[0].dependsOn[1] must be a key string");
        assertRefused(
                "{'tasks': [{'key': 'a', 'type': 't', 'join': 1}]}",
                "tasks[0].join must be a string, one of all, settled, any");
        assertRefused(
                "{'tasks': [{'key': 1, 'type': 't'}]}",
                "tasks[0].key must be a string matching [A-Za-z0-9._:-]{1,128}");
        assertRefused(
                "{'chain': [{'chain': [{'type': 't'}], 'type': 't'}]}",
                "chain[0] must hold exactly one of chain, group, chord and nothing else (a task is an object with none of them)");
    }

    @Test
    void a_task_of_a_flow_is_checked_as_a_single_task_is_with_its_place_named() {
        assertRefused(
                "{'chain': [{'type': 't'}, {'group': [{'type': 't'}, {'payload': {}}]}]}",
                "chain[1].group[1].type must be a non-empty string of at most 200 characters");
        assertRefused(
                "{'tasks': [{'key': 'a', 'type': 't', 'priority': 'high'}]}", "tasks[0].priority must be an integer");
        String unknown = refused("{'tasks': [{'key': 'a', 'type': 't', 'dependson': ['b']}]}");
        assertTrue(unknown.startsWith("tasks[0].dependson is not a known field (known: "), unknown);
        assertTrue(
                unknown.contains("dependsOn") && unknown.contains("join") && unknown.contains("key, maxAttempts"),
                unknown);
        assertTrue(unknown.contains("startWithinMs"), unknown);
    }

    @Test
    void an_empty_flow_is_refused_however_it_is_empty() {
        assertRefused("{'tasks': []}", "tasks must not be empty: a flow runs at least one task");
        assertRefused("{'chain': []}", "chain must not be empty: a flow runs at least one task");
        assertRefused("{'group': []}", "group must not be empty: a flow runs at least one task");
        assertRefused(
                "{'chain': [{'type': 't'}, {'group': []}]}",
                "chain[1].group must not be empty: a flow runs at least one task");
        assertRefused(
                "{'chord': {'group': [], 'then': {'type': 't'}}}",
                "chord.group must not be empty: a flow runs at least one task");
    }

    @Test
    void a_key_must_match_the_rule_and_only_its_first_128_characters_are_quoted() {
        assertRefused(
                "{'tasks': [{'key': 'a b', 'type': 't'}]}",
                "tasks[0].key must match [A-Za-z0-9._:-]{1,128} (got 'a b')");
        assertRefused(
                "{'tasks': [{'key': '', 'type': 't'}]}", "tasks[0].key must match [A-Za-z0-9._:-]{1,128} (got '')");
        assertRefused(
                "{'tasks': [{'key': '" + "k".repeat(300) + "', 'type': 't'}]}",
                "tasks[0].key must match [A-Za-z0-9._:-]{1,128} (got '" + "k".repeat(128) + "...')");
        assertEquals(
                List.of("k".repeat(128), "A-z_0.9:x"),
                keys(read("{'group': [{'key': '" + "k".repeat(128)
                        + "', 'type': 't'}, {'key': 'A-z_0.9:x', 'type': 't'}]}")));
    }

    @Test
    void a_duplicate_key_is_named_with_both_places() {
        assertRefused(
                "{'tasks': [{'key': 'a', 'type': 't'}, {'key': 'b', 'type': 't'}, {'key': 'a', 'type': 't'}]}",
                "tasks[2]: duplicate key 'a' (tasks[0] has it too)");
        assertRefused(
                "{'chain': [{'type': 't'}, {'key': '0', 'type': 't'}]}",
                "chain[1]: duplicate key '0' (chain[0] has it too; a task that gives no key is named by its position)");
    }

    @Test
    void dependson_must_name_another_task_of_the_flow() {
        assertRefused("""
                {'tasks': [{'key': 'a', 'type': 't'}, {'key': 'b', 'type': 't'},
                           {'key': 'c', 'type': 't', 'dependsOn': ['x', 'a']}]}""", "tasks[2].dependsOn[0]: no task of the flow has key 'x'");
        assertRefused(
                "{'tasks': [{'key': 'a', 'type': 't'}, {'key': 'b', 'type': 't', 'dependsOn': ['a', 'a', 'b']}]}",
                "tasks[1].dependsOn[2]: a task cannot depend on itself ('b')");
        assertRefused(
                "{'chain': [{'type': 't'}, {'group': [{'type': 't', 'dependsOn': ['1.0']}]}]}",
                "chain[1].group[0].dependsOn[0]: a task cannot depend on itself ('1.0')");
        assertRefused(
                "{'group': [{'type': 't', 'dependsOn': ['" + "y".repeat(200) + "']}]}",
                "group[0].dependsOn[0]: no task of the flow has key '" + "y".repeat(128) + "...'");
    }

    @Test
    void an_unknown_join_is_refused_with_the_known_ones() {
        assertRefused(
                "{'chain': [{'type': 't'}, {'type': 't', 'join': 'first'}]}",
                "chain[1].join must be one of all, settled, any (got 'first')");
    }

    @Test
    void a_cycle_is_named_in_order_each_key_depending_on_the_next() {
        assertRefused("""
                {'tasks': [{'key': 'root', 'type': 't'},
                           {'key': 'a', 'type': 't', 'dependsOn': ['root', 'b']},
                           {'key': 'b', 'type': 't', 'dependsOn': ['c']},
                           {'key': 'c', 'type': 't', 'dependsOn': ['a']},
                           {'key': 'after', 'type': 't', 'dependsOn': ['c']}]}""", "dependsOn forms a cycle: a -> b -> c -> a (each depends on the next)");
        assertRefused(
                "{'chain': [{'key': 'a', 'type': 't'}, {'key': 'b', 'type': 't', 'dependsOn': ['c']}, {'key': 'c', 'type': 't'}]}",
                "dependsOn forms a cycle: b -> c -> b (each depends on the next)");
    }

    @Test
    void a_cycle_of_5000_tasks_is_found_without_a_deep_stack_and_named_in_part() {
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < 5000; i++) {
            tasks.add(new JsonObject()
                    .put("key", "t" + i)
                    .put("type", "t")
                    .put("dependsOn", new JsonArray().add("t" + ((i + 1) % 5000))));
        }
        String message = refused(new JsonObject().put("tasks", tasks), 10_000);
        assertTrue(message.startsWith("dependsOn forms a cycle: t0 -> t1 -> t2 -> "), message);
        assertTrue(
                message.endsWith(
                        " -> t49 -> ... -> t0 (each depends on the next; 5000 tasks on the cycle, the first 50 shown)"),
                message);
    }

    @Test
    void a_flow_holds_at_most_max_tasks_and_one_dependson_names_at_most_as_many() {
        assertEquals(
                "a flow holds at most 2 tasks; this one has 3",
                refused(
                        json(
                                "{'tasks': [{'key': 'a', 'type': 't'}, {'key': 'b', 'type': 't'}, {'key': 'c', 'type': 't'}]}"),
                        2));
        assertEquals(
                "a flow holds at most 3 tasks; this one has 4",
                refused(
                        json(
                                "{'chord': {'group': [{'type': 't'}, {'chain': [{'type': 't'}, {'type': 't'}]}], 'then': {'type': 't'}}}"),
                        3));
        assertEquals(
                "tasks[1].dependsOn names 3 keys, more than the 2 tasks a flow may hold",
                refused(
                        json(
                                "{'tasks': [{'key': 'a', 'type': 't'}, {'key': 'b', 'type': 't', 'dependsOn': ['a', 'a', 'a']}]}"),
                        2));
        FlowSpec flow = FlowJson.read(
                json("{'tasks': [{'key': 'a', 'type': 't'}, {'key': 'b', 'type': 't', 'dependsOn': ['a', 'a']}]}"), 2);
        assertEquals(List.of("a"), flow.tasks().get(1).dependsOn());
    }

    // --- size

    @Test
    void a_chain_of_10000_tasks_parses() {
        FlowSpec flow = FlowJson.read(new JsonObject().put("chain", tasks(10_000)), 10_000);
        assertEquals(10_000, flow.tasks().size());
        assertEquals(
                9_999,
                flow.tasks().stream().mapToInt(task -> task.dependsOn().size()).sum());
        assertEquals(List.of("9998"), flow.tasks().get(9_999).dependsOn());
        assertEquals(List.of("0"), flow.roots().stream().map(FlowTask::key).toList());
        assertEquals("9999", flow.topological().get(9_999).key());
    }

    @Test
    void a_chord_of_10000_members_parses() {
        JsonObject body = new JsonObject()
                .put(
                        "chord",
                        new JsonObject().put("group", tasks(10_000)).put("then", new JsonObject().put("type", "t")));
        FlowSpec flow = FlowJson.read(body, 10_001);
        assertEquals(10_001, flow.tasks().size());
        FlowTask then = flow.tasks().get(10_000);
        assertEquals("then", then.key());
        assertEquals(10_000, then.dependsOn().size());
        assertEquals(
                10_000,
                flow.tasks().stream().mapToInt(task -> task.dependsOn().size()).sum());
        assertEquals(10_000, flow.roots().size());
    }

    @Test
    void a_flow_of_10001_tasks_is_refused_with_max_10000() {
        assertEquals(
                "a flow holds at most 10000 tasks; this one has 10001",
                refused(new JsonObject().put("chain", tasks(10_001)), 10_000));
        JsonArray explicit = new JsonArray();
        for (int i = 0; i < 10_001; i++) {
            explicit.add(new JsonObject().put("key", "k" + i).put("type", "t"));
        }
        assertEquals(
                "a flow holds at most 10000 tasks; this one has 10001",
                refused(new JsonObject().put("tasks", explicit), 10_000));
    }

    @Test
    void a_chain_of_two_groups_of_5000_is_refused_for_its_edges_before_any_task_is_read() {
        // Each task names an unknown field: were the tasks read (or the edges made) first, that would be the refusal.
        JsonArray group = new JsonArray();
        for (int i = 0; i < 5_000; i++) {
            group.add(new JsonObject().put("type", "t").put("unknown", true));
        }
        JsonObject body = new JsonObject()
                .put(
                        "chain",
                        new JsonArray()
                                .add(new JsonObject().put("group", group))
                                .add(new JsonObject().put("group", group)));
        assertEquals(
                "a flow may have at most 100000 dependsOn edges in all; this one has 25000000", refused(body, 10_000));
    }

    @Test
    void edges_are_counted_through_chords_and_nested_chains_as_they_would_be_made() {
        // A chord of 20 whose then is a group of 20: 400 edges; in a chain after a group of 30, 600 more.
        JsonObject chord = new JsonObject()
                .put(
                        "chord",
                        new JsonObject().put("group", tasks(20)).put("then", new JsonObject().put("group", tasks(20))));
        JsonObject body = new JsonObject()
                .put(
                        "chain",
                        new JsonArray()
                                .add(new JsonObject().put("group", tasks(30)))
                                .add(chord));
        FlowSpec flow = FlowJson.read(body, 100);
        assertEquals(
                1_000,
                flow.tasks().stream().mapToInt(task -> task.dependsOn().size()).sum());
        assertEquals("a flow may have at most 990 dependsOn edges in all; this one has 1000", refused(body, 99));
    }

    @Test
    void the_tasks_form_counts_its_edges_as_it_reads_them() {
        // 60 tasks naming 20 parents each, none of which exists: the edges pass 10 a task first.
        JsonArray tasks = new JsonArray();
        JsonArray parents = new JsonArray();
        for (int i = 0; i < 20; i++) {
            parents.add("missing" + i);
        }
        for (int i = 0; i < 60; i++) {
            tasks.add(new JsonObject().put("key", "k" + i).put("type", "t").put("dependsOn", parents));
        }
        assertEquals(
                "a flow may have at most 600 dependsOn edges in all; this one has 620",
                refused(new JsonObject().put("tasks", tasks), 60));
    }

    private static JsonArray tasks(int count) {
        JsonArray tasks = new JsonArray();
        for (int i = 0; i < count; i++) {
            tasks.add(new JsonObject().put("type", "t"));
        }
        return tasks;
    }

    // --- canonical form

    @Test
    void the_same_body_gives_the_same_canonical_json_with_sorted_keys() {
        String body =
                "{'name': 'n', 'chain': [{'type': 't', 'payload': {'b': 1, 'a': 2}}, {'type': 'u', 'join': 'any'}]}";
        JsonObject canonical = read(body).canonical();
        assertEquals(canonical.encode(), read(body).canonical().encode());
        assertEquals(
                "{\"name\":\"n\",\"tasks\":["
                        + "{\"dependsOn\":[],\"join\":\"all\",\"key\":\"0\",\"submission\":{\"payload\":{\"a\":2,\"b\":1},\"type\":\"t\"}},"
                        + "{\"dependsOn\":[\"0\"],\"join\":\"any\",\"key\":\"1\",\"submission\":{\"payload\":{},\"type\":\"u\"}}]}",
                canonical.encode());
        assertNotEquals(canonical, read(body.replace("'any'", "'all'")).canonical());
        assertFalse(read("{'group': [{'type': 't'}]}").canonical().containsKey("name"));
    }
}
