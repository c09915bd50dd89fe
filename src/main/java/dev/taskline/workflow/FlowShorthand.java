package dev.taskline.workflow;

import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;

/**
 * Reads the shorthands, which say a flow's edges by nesting rather than by key: a chain runs its
 * elements one after the other, a group side by side, a chord runs its group and then its
 * {@code then}. An element is a task object or another shorthand. Each element has heads (its
 * tasks with no edge from inside it) and tails (its tasks nothing inside it depends on): in a
 * chain each element's heads depend on every tail of the element before it; a chord's {@code then}
 * heads on every tail of its group. A task that gives no key is named by its position: the indexes
 * and "then"s on the way to it, joined by dots ("1.0", "1.then").
 *
 * <p>The walk recurses on nesting only, which is capped, and loops over an element's members, so
 * that a chain of ten thousand tasks needs no deep stack.
 */
final class FlowShorthand {

    static final int MAX_DEPTH = 32;
    private static final List<String> KINDS = List.of("chain", "group", "chord");
    private static final Set<String> CHORD_FIELDS = Set.of("group", "then");

    /** Positions in {@link #drafts}. */
    private record Part(List<Integer> heads, List<Integer> tails) {}

    private final int maxTasks;
    private final List<FlowDraft> drafts = new ArrayList<>();

    private FlowShorthand(int maxTasks) {
        this.maxTasks = maxTasks;
    }

    /** The tasks of a flow given as the shorthand {@code kind} ("chain", "group" or "chord") with {@code value}. */
    static List<FlowDraft> read(String kind, Object value, int maxTasks) {
        // Counted before any task is read, so that a flow far too large is refused for that alone.
        FlowJson.checkSize(count(kind, value, 1), maxTasks);
        FlowShorthand reader = new FlowShorthand(maxTasks);
        reader.shorthand(kind, value, "", "", 1);
        return reader.drafts;
    }

    /** {@code place} names the object holding the shorthand in errors, {@code path} its position for keys. */
    private Part shorthand(String kind, Object value, String place, String path, int depth) {
        String where = place.isEmpty() ? kind : place + "." + kind;
        if (depth > MAX_DEPTH) {
            throw new InvalidTaskException(where + ": shorthands nest at most " + MAX_DEPTH + " deep");
        }
        return switch (kind) {
            case "chord" -> chord(value, where, path, depth);
            case "chain" -> members(true, value, where, path, depth);
            default -> members(false, value, where, path, depth);
        };
    }

    private Part members(boolean chain, Object value, String where, String path, int depth) {
        if (!(value instanceof JsonArray array)) {
            throw new InvalidTaskException(where + " must be an array of tasks and shorthands");
        }
        if (array.isEmpty()) {
            throw new InvalidTaskException(where + " must not be empty: a flow runs at least one task");
        }
        List<Integer> heads = new ArrayList<>();
        List<Integer> tails = new ArrayList<>();
        Part previous = null;
        for (int i = 0; i < array.size(); i++) {
            Part part = element(array.getValue(i), where + "[" + i + "]", child(path, Integer.toString(i)), depth);
            if (!chain) {
                heads.addAll(part.heads());
                tails.addAll(part.tails());
            } else if (previous == null) {
                heads = part.heads();
            } else {
                link(previous.tails(), part.heads());
            }
            previous = part;
        }
        return chain ? new Part(heads, previous.tails()) : new Part(heads, tails);
    }

    private Part chord(Object value, String where, String path, int depth) {
        if (!(value instanceof JsonObject object)) {
            throw new InvalidTaskException(where + " must be an object with group and then");
        }
        InvalidTaskException.unlessKnown(object, CHORD_FIELDS, where + ".");
        // The group adds no segment to its members' keys: they are the chord's "0", "1", ...
        Part group = members(false, object.getValue("group"), where + ".group", path, depth);
        Object then = object.getValue("then");
        if (then == null) {
            throw new InvalidTaskException(where + ".then is required: a task, or a chain, group or chord");
        }
        Part last = element(then, where + ".then", child(path, "then"), depth);
        link(group.tails(), last.heads());
        return new Part(group.heads(), last.tails());
    }

    private Part element(Object value, String place, String path, int depth) {
        if (!(value instanceof JsonObject object)) {
            throw new InvalidTaskException(place + " must be an object: a task, or a chain, group or chord");
        }
        String kind = kindOf(object);
        if (kind == null) {
            int position = drafts.size();
            drafts.add(FlowJson.task(object, place, path, maxTasks));
            return new Part(List.of(position), List.of(position));
        }
        if (object.size() != 1) {
            throw new InvalidTaskException(place + " must hold exactly one of " + String.join(", ", KINDS)
                    + " and nothing else (a task is an object with none of them)");
        }
        return shorthand(kind, object.getValue(kind), place, path, depth + 1);
    }

    private void link(List<Integer> parents, List<Integer> children) {
        for (int child : children) {
            drafts.get(child).structural.addAll(parents);
        }
    }

    private static String kindOf(JsonObject object) {
        for (String kind : KINDS) {
            if (object.containsKey(kind)) {
                return kind;
            }
        }
        return null;
    }

    private static String child(String path, String segment) {
        return path.isEmpty() ? segment : path + "." + segment;
    }

    /**
     * The tasks the shorthand holds, read leniently: what is malformed counts as little as it
     * can, the walk that reads the tasks refuses it. Nesting past the cap is not counted, for
     * the same reason.
     */
    private static int count(String kind, Object value, int depth) {
        if (depth > MAX_DEPTH) {
            return 0;
        }
        if (kind.equals("chord")) {
            return value instanceof JsonObject object
                    ? count("group", object.getValue("group"), depth) + countElement(object.getValue("then"), depth)
                    : 0;
        }
        int count = 0;
        if (value instanceof JsonArray array) {
            for (int i = 0; i < array.size(); i++) {
                count += countElement(array.getValue(i), depth);
            }
        }
        return count;
    }

    private static int countElement(Object value, int depth) {
        if (value == null) {
            return 0;
        }
        if (value instanceof JsonObject object) {
            String kind = kindOf(object);
            if (kind != null) {
                return count(kind, object.getValue(kind), depth + 1);
            }
        }
        return 1;
    }
}
