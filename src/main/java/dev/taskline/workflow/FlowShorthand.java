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
        // Counted before any task is read or any edge made, so that a flow far too large is refused
        // for that alone: nesting multiplies edges (a chain of two groups of 5,000 is 25 million),
        // and building them first would take the event loop and the memory the cap is there to spare.
        Size size = count(kind, value, 1);
        FlowJson.checkSize(size.tasks, maxTasks);
        FlowRules.checkEdges(size.edges, maxTasks);
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
     * What an element would make, counted without making it: its tasks, heads, tails and edges.
     * Each count stops growing at {@link #CEILING}, far past any cap, so that no product overflows.
     */
    private record Size(long tasks, long heads, long tails, long edges) {

        static final Size NONE = new Size(0, 0, 0, 0);
        static final Size TASK = new Size(1, 1, 1, 0);
    }

    private static final long CEILING = 1L << 40;

    private static long capped(long n) {
        return Math.min(n, CEILING);
    }

    private static long times(long a, long b) {
        try {
            return capped(Math.multiplyExact(a, b));
        } catch (ArithmeticException e) {
            return CEILING;
        }
    }

    /**
     * The shorthand's size, read leniently: what is malformed counts as little as it can, the walk
     * that reads the tasks refuses it. Nesting past the cap is not counted, for the same reason.
     */
    private static Size count(String kind, Object value, int depth) {
        if (depth > MAX_DEPTH) {
            return Size.NONE;
        }
        if (kind.equals("chord")) {
            if (!(value instanceof JsonObject object)) {
                return Size.NONE;
            }
            Size group = count("group", object.getValue("group"), depth);
            Size then = countElement(object.getValue("then"), depth);
            return new Size(
                    capped(group.tasks + then.tasks),
                    group.heads,
                    then.tails,
                    capped(group.edges + then.edges + times(group.tails, then.heads)));
        }
        boolean chain = kind.equals("chain");
        long tasks = 0;
        long heads = 0;
        long tails = 0;
        long edges = 0;
        Size previous = null;
        if (value instanceof JsonArray array) {
            for (int i = 0; i < array.size(); i++) {
                Size part = countElement(array.getValue(i), depth);
                if (part.tasks == 0) {
                    continue;
                }
                tasks = capped(tasks + part.tasks);
                edges = capped(edges + part.edges);
                if (!chain) {
                    heads = capped(heads + part.heads);
                    tails = capped(tails + part.tails);
                } else if (previous == null) {
                    heads = part.heads;
                } else {
                    edges = capped(edges + times(previous.tails, part.heads));
                }
                previous = part;
            }
        }
        if (chain && previous != null) {
            tails = previous.tails;
        }
        return new Size(tasks, heads, tails, edges);
    }

    private static Size countElement(Object value, int depth) {
        if (value == null) {
            return Size.NONE;
        }
        if (value instanceof JsonObject object) {
            String kind = kindOf(object);
            if (kind != null) {
                return count(kind, object.getValue(kind), depth + 1);
            }
        }
        return Size.TASK;
    }
}
