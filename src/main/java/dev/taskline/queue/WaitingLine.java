package dev.taskline.queue;

import dev.taskline.model.Task;
import java.util.ArrayDeque;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Collections;
import java.util.Comparator;
import java.util.HashMap;
import java.util.IdentityHashMap;
import java.util.Iterator;
import java.util.List;
import java.util.Map;
import java.util.NoSuchElementException;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.TreeMap;
import java.util.UUID;
import java.util.function.Predicate;
import java.util.function.ToIntFunction;

/**
 * The tasks of a queue that wait for a slot, in the order they are to start. Fair: tenants take
 * turns, a tenant's weight being how many of its tasks start in its turn, and tasks without a
 * tenant take their turns as one more tenant; within a tenant, the queue's order (priority with
 * aging, then due time, then id). So a tenant with a deep backlog delays another's next task by at
 * most one turn of each tenant waiting, not by the backlog. Not fair: the queue's order alone, as
 * one heap. Not thread-safe: {@link TaskQueue} holds its lock around every call.
 */
final class WaitingLine implements Iterable<Task> {

    /** The group of the tasks without a tenant; no tenant's name is empty. */
    private static final String NO_TENANT = "";

    private final Comparator<Task> order;
    private final ToIntFunction<String> weight;
    /** Not fair: every task is here. */
    private final PriorityQueue<Task> all;
    /** Fair: each tenant's waiting tasks, for tenants that have some. */
    private final Map<String, PriorityQueue<Task>> byTenant = new HashMap<>();
    /** Fair: the tenants with waiting tasks in turn order, the one whose turn it is first. */
    private final ArrayDeque<String> turns = new ArrayDeque<>();
    /** Fair: how many more of its tasks the first in turn may start before the next one's turn. */
    private int credit;

    private int size;
    /**
     * How many tasks wait of each due time: the first due is read at every look at the queue (its
     * lag), and a walk of the line for it cost a deep backlog's length each time.
     */
    private final TreeMap<Long, Integer> dues = new TreeMap<>();
    // The line last added to, kept because most adds follow one of the same tenant (a batch, or a
    // queue nobody names a tenant for): it saves the map lookup. Null once that line is dropped.
    private String lastTenant;
    private PriorityQueue<Task> lastLine;

    /**
     * @param fair   whether tenants take turns
     * @param weight a tenant's weight (at least 1); called with the empty name for tasks without one
     */
    WaitingLine(Comparator<Task> order, boolean fair, ToIntFunction<String> weight) {
        this.order = order;
        this.weight = weight;
        this.all = fair ? null : new PriorityQueue<>(order);
    }

    private static String group(Task task) {
        return task.tenant() == null ? NO_TENANT : task.tenant();
    }

    void add(Task task) {
        size++;
        dues.merge(task.dueAtMillis(), 1, Integer::sum);
        if (all != null) {
            all.add(task);
            return;
        }
        String tenant = group(task);
        PriorityQueue<Task> line = tenant.equals(lastTenant) ? lastLine : byTenant.get(tenant);
        if (line == null) {
            line = new PriorityQueue<>(order);
            byTenant.put(tenant, line);
        }
        if (line.isEmpty()) {
            // A tenant that had nothing waiting takes its turn after those that have.
            turns.addLast(tenant);
            if (turns.size() == 1) {
                credit = weight.applyAsInt(tenant);
            }
        }
        lastTenant = tenant;
        lastLine = line;
        line.add(task);
    }

    void addAll(Collection<Task> tasks) {
        tasks.forEach(this::add);
    }

    /** The next task to start, or null. */
    Task poll() {
        if (size == 0) {
            return null;
        }
        size--;
        if (all != null) {
            return undue(all.poll());
        }
        String tenant = turns.peekFirst();
        PriorityQueue<Task> line = tenant.equals(lastTenant) ? lastLine : byTenant.get(tenant);
        Task task = undue(line.poll());
        if (line.isEmpty()) {
            release(tenant);
            turns.pollFirst();
            credit = turns.isEmpty() ? 0 : weight.applyAsInt(turns.peekFirst());
        } else if (turns.size() > 1 && --credit <= 0) {
            // One tenant alone keeps its turn; with others waiting, its turn ends after its weight.
            turns.addLast(turns.pollFirst());
            credit = weight.applyAsInt(turns.peekFirst());
        }
        return task;
    }

    /** The task {@link #poll} would return, left in line and its tenant's turn untouched; null when none waits. */
    Task peek() {
        if (size == 0) {
            return null;
        }
        return all != null ? all.peek() : byTenant.get(turns.peekFirst()).peek();
    }

    int size() {
        return size;
    }

    boolean isEmpty() {
        return size == 0;
    }

    boolean remove(Task task) {
        if (all != null) {
            boolean removed = all.remove(task);
            if (removed) {
                size--;
                undue(task);
            }
            return removed;
        }
        String tenant = group(task);
        PriorityQueue<Task> line = byTenant.get(tenant);
        if (line == null || !line.remove(task)) {
            return false;
        }
        size--;
        undue(task);
        if (line.isEmpty()) {
            drop(tenant);
        }
        return true;
    }

    boolean removeIf(Predicate<Task> asked) {
        Predicate<Task> which = task -> {
            if (!asked.test(task)) {
                return false;
            }
            undue(task);
            return true;
        };
        if (all != null) {
            int before = all.size();
            boolean removed = all.removeIf(which);
            size -= before - all.size();
            return removed;
        }
        boolean removed = false;
        List<String> emptied = new ArrayList<>();
        for (Map.Entry<String, PriorityQueue<Task>> line : byTenant.entrySet()) {
            int before = line.getValue().size();
            if (line.getValue().removeIf(which)) {
                removed = true;
                size -= before - line.getValue().size();
                if (line.getValue().isEmpty()) {
                    emptied.add(line.getKey());
                }
            }
        }
        emptied.forEach(this::drop);
        return removed;
    }

    /** The waiting task of {@code id}, taken out of line; null when it does not wait here. */
    Task remove(UUID id) {
        for (Task task : this) {
            if (task.id().equals(id)) {
                return remove(task) ? task : null;
            }
        }
        return null;
    }

    /**
     * Up to {@code max} waiting tasks that {@code takes} accepts, best first, taken out of line; the
     * others keep their places. Most workers run most of what waits: the tasks are taken in turn, as
     * {@link #poll} hands them out, those passed over put back, which costs the tasks taken and not
     * the line. When more than {@link #PASSED_OVER} for each task wanted are passed over, the rest
     * are found in one pass over the heap instead.
     */
    List<Task> takeBest(int max, Predicate<Task> takes) {
        List<Task> taken = new ArrayList<>(Math.min(max, size));
        List<Task> passed = new ArrayList<>();
        int most = PASSED_OVER * max + 16;
        while (taken.size() < max && size > 0 && passed.size() < most) {
            Task next = poll();
            (takes.test(next) ? taken : passed).add(next);
        }
        addAll(passed);
        if (taken.size() < max && passed.size() >= most) {
            taken.addAll(bestInOnePass(max - taken.size(), takes));
        }
        return taken;
    }

    /** Tasks passed over, for each one wanted, before {@link #takeBest} looks at the whole line. */
    private static final int PASSED_OVER = 4;

    /**
     * As {@link #takeBest}, in one pass over the heap that keeps the best few that match (the worst
     * of them on top): a worker that runs few of the tasks waiting.
     */
    private List<Task> bestInOnePass(int max, Predicate<Task> takes) {
        PriorityQueue<Task> best = new PriorityQueue<>(max + 1, order.reversed());
        for (Task task : this) {
            if (takes.test(task)) {
                best.add(task);
                if (best.size() > max) {
                    best.poll();
                }
            }
        }
        if (best.isEmpty()) {
            return List.of();
        }
        List<Task> taken = new ArrayList<>(best);
        taken.sort(order);
        Set<Task> chosen = Collections.newSetFromMap(new IdentityHashMap<>());
        chosen.addAll(taken);
        removeIf(chosen::contains);
        return taken;
    }

    /** When the task in line that is due first was due; {@link Long#MAX_VALUE} when none waits. */
    long firstDue() {
        return dues.isEmpty() ? Long.MAX_VALUE : dues.firstKey();
    }

    private Task undue(Task task) {
        dues.computeIfPresent(task.dueAtMillis(), (due, n) -> n == 1 ? null : n - 1);
        return task;
    }

    /**
     * How many of the waiting tasks {@link #poll} would hand out before {@code probe}, a task not in
     * line, were it added with {@code peers[i]} more of its tenant's tasks ahead of it (the others of
     * its batch): one answer per entry of {@code peers}. Exact for the line as it stands; tasks added
     * later (of a higher priority, or a new tenant's turn) may still come first. One pass over the
     * probe's tenant's line (over the whole line, not fair), then one over the tenants in turn per
     * answer.
     */
    int[] startsBefore(Task probe, int[] peers) {
        int[] before = new int[peers.length];
        if (all != null) {
            int ahead = countBefore(all, probe);
            for (int i = 0; i < peers.length; i++) {
                before[i] = ahead + peers[i];
            }
            return before;
        }
        String tenant = group(probe);
        PriorityQueue<Task> line = byTenant.get(tenant);
        int ownAhead = line == null ? 0 : countBefore(line, probe);
        for (int i = 0; i < peers.length; i++) {
            before[i] = startsBefore(tenant, ownAhead + peers[i]);
        }
        return before;
    }

    private int countBefore(PriorityQueue<Task> line, Task probe) {
        int n = 0;
        for (Task task : line) {
            if (order.compare(task, probe) < 0) {
                n++;
            }
        }
        return n;
    }

    /**
     * Fair: the tasks started before the {@code own + 1}-th of {@code tenant}'s. Its tenant's turn in
     * which it starts is found from the tenant's place in the turns (last, when it has nothing
     * waiting: it joins at the end) and its allowance per turn (the first in turn has what is left of
     * its credit); each other tenant starts its allowance in each of its turns before that one, as
     * far as its line reaches.
     */
    private int startsBefore(String tenant, int own) {
        int ownWeight = weight.applyAsInt(tenant);
        boolean ownFirst = tenant.equals(turns.peekFirst());
        // Turns of its tenant that pass before the one in which the task starts.
        int turn = ownFirst ? (own < credit ? 0 : 1 + (own - credit) / ownWeight) : own / ownWeight;
        int before = own;
        boolean aheadOfOwn = true;
        boolean first = true;
        for (String other : turns) {
            if (other.equals(tenant)) {
                aheadOfOwn = false;
                first = false;
                continue;
            }
            int theirTurns = aheadOfOwn ? turn + 1 : turn;
            if (theirTurns > 0) {
                int w = weight.applyAsInt(other);
                long allowance = first ? credit + (long) w * (theirTurns - 1) : (long) w * theirTurns;
                before += (int) Math.min(byTenant.get(other).size(), allowance);
            }
            first = false;
        }
        return before;
    }

    /** A tenant whose last waiting task left other than by {@link #poll}. */
    private void drop(String tenant) {
        release(tenant);
        leaveTurns(tenant);
    }

    /**
     * A tenant's line emptied: dropped, so that tenants come and go without the map growing, but for
     * the line of tasks without a tenant, which a queue that names none empties and refills all the
     * time: a new heap each time, grown again from its first size.
     */
    private void release(String tenant) {
        if (tenant.equals(NO_TENANT)) {
            return;
        }
        byTenant.remove(tenant);
        if (tenant.equals(lastTenant)) {
            lastTenant = null;
            lastLine = null;
        }
    }

    private void leaveTurns(String tenant) {
        boolean first = tenant.equals(turns.peekFirst());
        turns.remove(tenant);
        if (first) {
            credit = turns.isEmpty() ? 0 : weight.applyAsInt(turns.peekFirst());
        }
    }

    /** Every waiting task, in no particular order. */
    @Override
    public Iterator<Task> iterator() {
        if (all != null) {
            return all.iterator();
        }
        Iterator<PriorityQueue<Task>> lines = byTenant.values().iterator();
        return new Iterator<>() {
            private Iterator<Task> current = java.util.Collections.emptyIterator();

            @Override
            public boolean hasNext() {
                while (!current.hasNext() && lines.hasNext()) {
                    current = lines.next().iterator();
                }
                return current.hasNext();
            }

            @Override
            public Task next() {
                if (!hasNext()) {
                    throw new NoSuchElementException();
                }
                return current.next();
            }
        };
    }
}
