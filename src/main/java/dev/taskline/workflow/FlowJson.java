package dev.taskline.workflow;

import dev.taskline.admission.Submission;
import dev.taskline.admission.SubmissionJson;
import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.stream.Collectors;

/**
 * Reads a flow from a request body: either its tasks with explicit keys and dependsOn, or a
 * shorthand (chain, group, chord; see {@link FlowShorthand}) that says the edges by nesting. Each
 * task is read by {@link SubmissionJson}, so a task of a flow is refused for what a single task
 * would be, with the same message behind the flow's place for it. What it cannot read, or a
 * graph that could never run (an unknown parent, a cycle), is an {@link InvalidTaskException}
 * (422).
 */
public final class FlowJson {

    static final int MAX_KEY_LENGTH = 128;
    static final String KEY_RULE = "[A-Za-z0-9._:-]{1,128}";
    private static final int MAX_NAME_LENGTH = 200;
    // A message naming a cycle of thousands of tasks would be too long to read or send.
    private static final int MAX_CYCLE_SHOWN = 50;
    private static final List<String> FORMS = List.of("tasks", "chain", "group", "chord");
    private static final Set<String> FIELDS = Set.of("name", "tasks", "chain", "group", "chord");
    private static final Set<String> FLOW_FIELDS = Set.of("key", "dependsOn", "join");
    private static final Set<String> TASK_FIELDS = union(SubmissionJson.taskFields(), FLOW_FIELDS);
    private static final String JOINS =
            Arrays.stream(Join.values()).map(Join::sql).collect(Collectors.joining(", "));

    private FlowJson() {}

    /** The flow {@code body} describes, of at most {@code maxTasks} tasks. */
    public static FlowSpec read(JsonObject body, int maxTasks) {
        if (maxTasks < 1) {
            throw new IllegalArgumentException("maxTasks must be positive: " + maxTasks);
        }
        if (body == null) {
            throw new InvalidTaskException("the body must be a JSON object describing a flow");
        }
        InvalidTaskException.unlessKnown(body, FIELDS, "");
        String name = name(body.getValue("name"));
        List<String> forms = FORMS.stream().filter(body::containsKey).toList();
        if (forms.size() != 1) {
            throw new InvalidTaskException("a flow gives exactly one of " + String.join(", ", FORMS)
                    + (forms.isEmpty() ? "" : " (this one gives " + String.join(", ", forms) + ")"));
        }
        String form = forms.get(0);
        List<FlowDraft> drafts = form.equals("tasks")
                ? tasks(body.getValue("tasks"), maxTasks)
                : FlowShorthand.read(form, body.getValue(form), maxTasks);
        return resolve(name, drafts);
    }

    private static String name(Object value) {
        if (value != null && (!(value instanceof String text) || text.isEmpty() || text.length() > MAX_NAME_LENGTH)) {
            throw new InvalidTaskException("name must be a string of 1 to " + MAX_NAME_LENGTH + " characters");
        }
        return (String) value;
    }

    private static List<FlowDraft> tasks(Object value, int maxTasks) {
        if (!(value instanceof JsonArray array)) {
            throw new InvalidTaskException("tasks must be an array of task objects");
        }
        if (array.isEmpty()) {
            throw new InvalidTaskException("tasks must not be empty: a flow runs at least one task");
        }
        checkSize(array.size(), maxTasks);
        List<FlowDraft> drafts = new ArrayList<>(array.size());
        long edges = 0;
        for (int i = 0; i < array.size(); i++) {
            String place = "tasks[" + i + "]";
            if (!(array.getValue(i) instanceof JsonObject object)) {
                throw new InvalidTaskException(place + " must be an object");
            }
            FlowDraft draft = task(object, place, null, maxTasks);
            // Counted as read, so that a graph past the cap is refused before it is resolved.
            edges += draft.given.size();
            FlowRules.checkEdges(edges, maxTasks);
            drafts.add(draft);
        }
        return drafts;
    }

    static void checkSize(long count, int maxTasks) {
        if (count > maxTasks) {
            throw new InvalidTaskException("a flow holds at most " + maxTasks + " tasks; this one has " + count);
        }
    }

    /**
     * One task object at {@code place}; {@code positionKey} is the key it gets if it gives none,
     * or null where it must give one.
     */
    static FlowDraft task(JsonObject object, String place, String positionKey, int maxTasks) {
        String where = place + ".";
        InvalidTaskException.unlessKnown(object, TASK_FIELDS, where);
        Object givenKey = object.getValue("key");
        String key = key(givenKey, place, positionKey);
        Map<String, Integer> given = dependsOn(object.getValue("dependsOn"), where, maxTasks);
        Join join = join(object.getValue("join"), where);
        // A shallow copy: SubmissionJson only reads, and the payload is not copied for nothing.
        JsonObject rest = new JsonObject(new LinkedHashMap<>(object.getMap()));
        FLOW_FIELDS.forEach(rest::remove);
        Submission submission = SubmissionJson.task(rest, where);
        return new FlowDraft(place, key, givenKey != null, submission, given, join);
    }

    private static String key(Object value, String place, String positionKey) {
        if (value == null) {
            if (positionKey == null) {
                throw new InvalidTaskException(place + ".key is required: a string matching " + KEY_RULE);
            }
            if (positionKey.length() > MAX_KEY_LENGTH) {
                throw new InvalidTaskException(place + ": the key its position would give it, '" + quote(positionKey)
                        + "', is longer than " + MAX_KEY_LENGTH + " characters; give it a key");
            }
            return positionKey;
        }
        if (!(value instanceof String text)) {
            throw new InvalidTaskException(place + ".key must be a string matching " + KEY_RULE);
        }
        if (!isKey(text)) {
            throw new InvalidTaskException(place + ".key must match " + KEY_RULE + " (got '" + quote(text) + "')");
        }
        return text;
    }

    static boolean isKey(String text) {
        if (text.isEmpty() || text.length() > MAX_KEY_LENGTH) {
            return false;
        }
        for (int i = 0; i < text.length(); i++) {
            char c = text.charAt(i);
            boolean allowed = (c >= 'A' && c <= 'Z')
                    || (c >= 'a' && c <= 'z')
                    || (c >= '0' && c <= '9')
                    || c == '.'
                    || c == '_'
                    || c == ':'
                    || c == '-';
            if (!allowed) {
                return false;
            }
        }
        return true;
    }

    /** At most the first 128 characters of {@code text}, never half a surrogate pair. */
    static String quote(String text) {
        if (text.length() <= MAX_KEY_LENGTH) {
            return text;
        }
        int end = Character.isHighSurrogate(text.charAt(MAX_KEY_LENGTH - 1)) ? MAX_KEY_LENGTH - 1 : MAX_KEY_LENGTH;
        return text.substring(0, end) + "...";
    }

    private static Map<String, Integer> dependsOn(Object value, String where, int maxTasks) {
        if (value == null) {
            return Map.of();
        }
        if (!(value instanceof JsonArray array)) {
            throw new InvalidTaskException(where + "dependsOn must be an array of key strings");
        }
        if (array.size() > maxTasks) {
            throw new InvalidTaskException(where + "dependsOn names " + array.size() + " keys, more than the "
                    + maxTasks + " tasks a flow may hold");
        }
        Map<String, Integer> given = new LinkedHashMap<>();
        for (int i = 0; i < array.size(); i++) {
            if (!(array.getValue(i) instanceof String parent)) {
                throw new InvalidTaskException(where + "dependsOn[" + i + "] must be a key string");
            }
            given.putIfAbsent(parent, i);
        }
        return given;
    }

    private static Join join(Object value, String where) {
        if (value == null) {
            return Join.ALL;
        }
        if (!(value instanceof String text)) {
            throw new InvalidTaskException(where + "join must be a string, one of " + JOINS);
        }
        Join join = Join.parse(text);
        if (join == null) {
            throw new InvalidTaskException(where + "join must be one of " + JOINS + " (got '" + quote(text) + "')");
        }
        return join;
    }

    /** Checks the keys and edges of the drafts as a whole and makes the flow. */
    private static FlowSpec resolve(String name, List<FlowDraft> drafts) {
        int n = drafts.size();
        Map<String, Integer> positions = new HashMap<>(n * 2);
        for (int i = 0; i < n; i++) {
            FlowDraft draft = drafts.get(i);
            Integer before = positions.putIfAbsent(draft.key, i);
            if (before != null) {
                throw new InvalidTaskException(draft.place + ": duplicate key '" + draft.key + "' ("
                        + drafts.get(before).place + " has it too"
                        + (draft.keyGiven && drafts.get(before).keyGiven
                                ? ""
                                : "; a task that gives no key is named by its position")
                        + ")");
            }
        }
        int[][] parents = new int[n][];
        List<List<String>> dependsOn = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            FlowDraft draft = drafts.get(i);
            // The shorthand's edges first, then those the task gave itself, each parent once.
            Set<Integer> of = new LinkedHashSet<>(draft.structural);
            for (Map.Entry<String, Integer> parent : draft.given.entrySet()) {
                Integer position = positions.get(parent.getKey());
                String where = draft.place + ".dependsOn[" + parent.getValue() + "]: ";
                if (position == null) {
                    throw new InvalidTaskException(
                            where + "no task of the flow has key '" + quote(parent.getKey()) + "'");
                }
                if (position == i) {
                    throw new InvalidTaskException(where + "a task cannot depend on itself ('" + draft.key + "')");
                }
                of.add(position);
            }
            parents[i] = of.stream().mapToInt(Integer::intValue).toArray();
            List<String> keys = new ArrayList<>(parents[i].length);
            for (int parent : parents[i]) {
                keys.add(drafts.get(parent).key);
            }
            dependsOn.add(keys);
        }
        if (FlowGraph.order(parents) == null) {
            throw new InvalidTaskException(cycleMessage(FlowGraph.cycle(parents), drafts));
        }
        List<FlowTask> tasks = new ArrayList<>(n);
        for (int i = 0; i < n; i++) {
            FlowDraft draft = drafts.get(i);
            tasks.add(new FlowTask(draft.key, draft.submission, dependsOn.get(i), draft.join));
        }
        return new FlowSpec(name, tasks);
    }

    private static String cycleMessage(List<Integer> cycle, List<FlowDraft> drafts) {
        StringBuilder message = new StringBuilder("dependsOn forms a cycle: ");
        int shown = Math.min(cycle.size(), MAX_CYCLE_SHOWN);
        for (int i = 0; i < shown; i++) {
            message.append(drafts.get(cycle.get(i)).key).append(" -> ");
        }
        if (shown < cycle.size()) {
            message.append("... -> ");
        }
        message.append(drafts.get(cycle.get(0)).key).append(" (each depends on the next");
        if (shown < cycle.size()) {
            message.append("; ")
                    .append(cycle.size())
                    .append(" tasks on the cycle, the first ")
                    .append(shown)
                    .append(" shown");
        }
        return message.append(")").toString();
    }

    private static Set<String> union(Set<String> a, Set<String> b) {
        Set<String> union = new HashSet<>(a);
        union.addAll(b);
        return Set.copyOf(union);
    }
}
