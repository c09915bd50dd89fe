package dev.taskline.queue;

import dev.taskline.config.QueueConfig;
import dev.taskline.model.ClaimGate;
import dev.taskline.model.Task;
import java.util.Comparator;
import java.util.HashMap;
import java.util.HashSet;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.UUID;

/**
 * What holds a due task out of the waiting line: its concurrency key at its bound, a rate budget
 * spent. Such a task waits aside, in its key's own line, so that it holds up no other key and no
 * task without one; it goes in line (as far as the bound allows, best first) when its key has room
 * again. The journal decides across nodes (see {@link ClaimGate}); this is what the node knows in
 * between. Not thread-safe: {@link TaskQueue} holds its lock around every call.
 *
 * <p>Keyed concurrency (QueueConfig.KeyLimits): {@code keyOut} counts a key's tasks taken out of
 * waiting (being claimed, claimed, running, finishing), {@code keyInLine} those in waiting; the two
 * together never pass the bound. A key the journal finds full (other nodes run its tasks) is
 * blocked here until the worker tries it again.
 *
 * <p>Rate limits (QueueConfig.RateLimit): the journal counts every node's starts and says when a
 * budget is spent. The queue's own budget spent, nothing is handed out until the worker lifts the
 * hold ({@code rateHeld}); a key's own (perKey), its tasks wait aside like a full key's ({@code
 * rateBlocked}; the tasks without a key are tracked under "", which no key can be).
 */
final class Gates {

    private final QueueConfig config;
    private final Comparator<Task> order;
    private final WaitingLine waiting;
    private final Map<String, PriorityQueue<Task>> keyAside = new HashMap<>();
    private final Map<String, Integer> keyInLine = new HashMap<>();
    private final Map<String, Integer> keyOut = new HashMap<>();
    private final Map<UUID, String> outKeyed = new HashMap<>();
    private final Set<String> keyBlocked = new HashSet<>();
    private int aside;
    private boolean rateHeld;
    private final Set<String> rateBlocked = new HashSet<>();

    /** @param waiting the line the tasks that may start go into */
    Gates(QueueConfig config, Comparator<Task> order, WaitingLine waiting) {
        this.config = config;
        this.order = order;
        this.waiting = waiting;
    }

    /**
     * What the journal must check before it starts {@code task} (its key's bound, its rate budget),
     * or null when its queue gates nothing and a plain claim will do.
     */
    ClaimGate gate(Task task) {
        String key = task.concurrencyKey();
        int keyLimit = keyBound(key);
        QueueConfig.RateLimit rate = config.rateLimit();
        if (keyLimit == 0 && rate == null) {
            return null;
        }
        return rate == null
                ? new ClaimGate(config.name(), key, keyLimit, null, 0, 0)
                : new ClaimGate(
                        config.name(),
                        key,
                        keyLimit,
                        rate.perKey() && key != null ? key : "",
                        rate.tasks(),
                        rate.perMs());
    }

    /** Whether any task of the queue may be gated (a bounded key, a rate limit). */
    boolean any() {
        return config.keyLimits().any() || config.rateLimit() != null;
    }

    /** Whether {@code task}'s start is decided by a gated claim (see {@link #gate}). */
    boolean gated(Task task) {
        return config.rateLimit() != null || keyBound(task.concurrencyKey()) > 0;
    }

    /** Whether the queue's own rate budget is spent: nothing may be handed out. */
    boolean rateHeld() {
        return rateHeld;
    }

    /** Puts a due task in line, or aside when its key is at its bound here or blocked. */
    void line(Task task) {
        String key = gateKey(task);
        if (key == null) {
            waiting.add(task);
        } else if (keyHasRoom(key)) {
            waiting.add(task);
            count(keyInLine, key, 1);
        } else {
            putAside(key, task);
        }
    }

    /** A task taken out of waiting for a worker (null: none was): its key counts it until it comes back. */
    Task out(Task task) {
        String key = task == null ? null : gateKey(task);
        if (key != null) {
            count(keyInLine, key, -1);
            count(keyOut, key, 1);
            outKeyed.put(task.id(), key);
        }
        return task;
    }

    /** Whether {@code id} is out of line under a key (handed to a worker). */
    boolean keyedOut(UUID id) {
        return outKeyed.containsKey(id);
    }

    /** A keyed task taken out of waiting came back or left: its key has room again. True when that put a task in line. */
    boolean back(UUID id) {
        String key = outKeyed.remove(id);
        if (key == null) {
            return false;
        }
        count(keyOut, key, -1);
        return refill(key);
    }

    /** {@code task} was dropped from the waiting line: its key's next task takes its place. True when one did. */
    boolean leftLine(Task task) {
        String key = gateKey(task);
        if (key == null) {
            return false;
        }
        count(keyInLine, key, -1);
        return refill(key);
    }

    /**
     * The worker's claim of {@code task} found its key full in the journal (other nodes run as many of
     * its tasks as the bound allows): the task waits aside, and its key takes no more claims until
     * {@link #retryKey}. False, and nothing changed, when it was not handed out as a task of a bounded
     * key (its bound was taken off meanwhile).
     */
    boolean keyFull(Task task) {
        String key = outKeyed.remove(task.id());
        if (key == null) {
            return false;
        }
        count(keyOut, key, -1);
        keyBlocked.add(key);
        putAside(key, task);
        return true;
    }

    /** A key found full in the journal may be tried again. True when that put a task in line. */
    boolean retryKey(String key) {
        keyBlocked.remove(key);
        return refill(key);
    }

    /** Every key found full may be tried again (another node freed room under some). True when any task came back in line. */
    boolean retryKeys() {
        boolean any = false;
        for (String key : List.copyOf(keyBlocked)) {
            any |= retryKey(key);
        }
        return any;
    }

    /**
     * The worker's claim of {@code task}, handed out under the queue's rate limit, found a budget
     * spent: the task waits, for the queue's own budget with everything else in line (nothing is
     * handed out until {@link #liftRate}), for a key's own aside with its key's tasks.
     */
    void rateFull(Task task) {
        String key = outKeyed.remove(task.id());
        if (key != null) {
            count(keyOut, key, -1);
        }
        if (config.rateLimit().perKey()) {
            String budget = gateKey(task);
            rateBlocked.add(budget);
            putAside(budget, task);
        } else {
            rateHeld = true;
            line(task);
        }
    }

    /** The rate budget {@code bucket} ({@link ClaimGate#bucket}) may start one more. True when tasks may be handed out again. */
    boolean liftRate(String bucket) {
        if (config.rateLimit() != null && config.rateLimit().perKey()) {
            return rateBlocked.remove(bucket) && refill(bucket);
        }
        boolean moved = rateHeld && !waiting.isEmpty();
        rateHeld = false;
        return moved;
    }

    /** Tasks waiting aside, for their key's bound or budget. */
    int aside() {
        return aside;
    }

    /** Tasks waiting aside because their concurrency key is at its bound (here, or on other nodes). */
    int heldByKeys() {
        return aside - asideOfRateBlocked();
    }

    /** Tasks waiting because a rate budget is spent: all in line, when it is the queue's own; else its key's. */
    int heldByRate() {
        return (rateHeld ? waiting.size() : 0) + asideOfRateBlocked();
    }

    /**
     * Of the tasks aside, those the rate limit holds: its key's budget was found spent, or under a
     * per-key limit its budget, not its concurrency bound, is what keeps its line short (see {@link
     * #lineBound}).
     */
    private int asideOfRateBlocked() {
        QueueConfig.RateLimit rate = config.rateLimit();
        if (rate == null || keyAside.isEmpty()) {
            return 0;
        }
        int n = 0;
        for (Map.Entry<String, PriorityQueue<Task>> side : keyAside.entrySet()) {
            String key = side.getKey();
            int bound = keyBound(key);
            if (rateBlocked.contains(key) || (rate.perKey() && (bound == 0 || rate.tasks() < bound))) {
                n += side.getValue().size();
            }
        }
        return n;
    }

    /** Drops {@code id} from the tasks aside; true when it was there. */
    boolean removeAside(UUID id) {
        for (Map.Entry<String, PriorityQueue<Task>> side : keyAside.entrySet()) {
            if (side.getValue().removeIf(t -> t.id().equals(id))) {
                aside--;
                if (side.getValue().isEmpty()) {
                    keyAside.remove(side.getKey());
                }
                return true;
            }
        }
        return false;
    }

    /** When the task aside that is due first was due; {@link Long#MAX_VALUE} when none is aside. */
    long firstDueAside() {
        long first = Long.MAX_VALUE;
        for (PriorityQueue<Task> side : keyAside.values()) {
            for (Task task : side) {
                first = Math.min(first, task.dueAtMillis());
            }
        }
        return first;
    }

    /** How many tasks of {@code key} may run at once; 0: not bounded (no key, "" included). */
    private int keyBound(String key) {
        return key == null || key.isEmpty() ? 0 : config.keyLimits().limit(key);
    }

    /**
     * The key under which {@code task} is tracked (its in-line and out counts, its aside line), or
     * null for a task that need not be: its key when the key is bounded or has a rate budget of its
     * own, "" for a task without a key under a per-key rate limit (it has a budget of its own too).
     */
    private String gateKey(Task task) {
        String key = task.concurrencyKey();
        if (config.rateLimit() != null && config.rateLimit().perKey()) {
            return key == null ? "" : key;
        }
        return keyBound(key) > 0 ? key : null;
    }

    /** Whether one more task of {@code key} may go in line: not blocked, and in line and out short of its bound (if any). */
    private boolean keyHasRoom(String key) {
        if (keyBlocked.contains(key) || rateBlocked.contains(key)) {
            return false;
        }
        int bound = lineBound(key);
        return bound == 0 || get(keyOut, key) + get(keyInLine, key) < bound;
    }

    /**
     * How many of a key's tasks may be in line or out at once (0: any number): its concurrency bound,
     * and under a per-key rate limit no more than its budget for a window, as more could only be
     * claimed to be refused (a lifted budget would otherwise send its whole backlog to be claimed).
     */
    private int lineBound(String key) {
        int bound = keyBound(key);
        QueueConfig.RateLimit rate = config.rateLimit();
        if (rate != null && rate.perKey()) {
            bound = bound == 0 ? rate.tasks() : Math.min(bound, rate.tasks());
        }
        return bound;
    }

    private void putAside(String key, Task task) {
        keyAside.computeIfAbsent(key, k -> new PriorityQueue<>(order)).add(task);
        aside++;
    }

    /** Moves the best tasks aside of {@code key} into line as far as its bound allows; true when any moved. */
    private boolean refill(String key) {
        PriorityQueue<Task> side = keyAside.get(key);
        boolean moved = false;
        while (side != null && !side.isEmpty() && keyHasRoom(key)) {
            waiting.add(side.poll());
            aside--;
            count(keyInLine, key, 1);
            moved = true;
        }
        if (side != null && side.isEmpty()) {
            keyAside.remove(key);
        }
        return moved;
    }

    private static int get(Map<String, Integer> counts, String key) {
        return counts.getOrDefault(key, 0);
    }

    private static void count(Map<String, Integer> counts, String key, int by) {
        counts.merge(key, by, (a, b) -> a + b == 0 ? null : a + b);
    }
}
