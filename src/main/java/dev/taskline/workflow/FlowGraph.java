package dev.taskline.workflow;

import java.util.ArrayList;
import java.util.Arrays;
import java.util.Collections;
import java.util.List;
import java.util.PriorityQueue;

/**
 * A flow's graph as task positions: {@code parents[i]} are the positions task {@code i} depends
 * on, each once. Everything here is iterative and linear but for a heap of ready tasks, since a
 * flow may hold ten thousand tasks in a single chain and a recursive walk would overflow the stack.
 */
final class FlowGraph {

    private FlowGraph() {}

    /**
     * Positions with parents before children (Kahn's algorithm); of the tasks ready at once the
     * first given goes first, so that a flow already given in an order that works keeps it. Null
     * if there is a cycle.
     */
    static int[] order(int[][] parents) {
        int[] order = new int[parents.length];
        int placed = kahn(parents, new int[parents.length], order);
        return placed == parents.length ? order : null;
    }

    /**
     * One cycle, as positions each depending on the next (the last on the first), starting at its
     * first given task; empty if there is none. Kahn's algorithm leaves exactly the tasks on or
     * behind a cycle unplaced, and each of those has an unplaced parent, so following unplaced
     * parents from any of them must come back to a task already seen: the walk from there is one
     * cycle.
     */
    static List<Integer> cycle(int[][] parents) {
        int n = parents.length;
        int[] waiting = new int[n];
        if (kahn(parents, waiting, new int[n]) == n) {
            return List.of();
        }
        int start = 0;
        while (waiting[start] == 0) {
            start++;
        }
        int[] seenAt = new int[n];
        Arrays.fill(seenAt, -1);
        List<Integer> walk = new ArrayList<>();
        int at = start;
        while (seenAt[at] < 0) {
            seenAt[at] = walk.size();
            walk.add(at);
            at = unplacedParent(parents[at], waiting);
        }
        List<Integer> cycle = new ArrayList<>(walk.subList(seenAt[at], walk.size()));
        Collections.rotate(cycle, -cycle.indexOf(Collections.min(cycle)));
        return cycle;
    }

    private static int unplacedParent(int[] parents, int[] waiting) {
        for (int parent : parents) {
            if (waiting[parent] > 0) {
                return parent;
            }
        }
        throw new IllegalStateException("an unplaced task with every parent placed");
    }

    /** Places what it can; leaves {@code waiting[i]} above zero for every task it could not place. */
    private static int kahn(int[][] parents, int[] waiting, int[] order) {
        int n = parents.length;
        int[][] children = children(parents);
        PriorityQueue<Integer> ready = new PriorityQueue<>();
        for (int i = 0; i < n; i++) {
            waiting[i] = parents[i].length;
            if (waiting[i] == 0) {
                ready.add(i);
            }
        }
        int placed = 0;
        while (!ready.isEmpty()) {
            int task = ready.poll();
            order[placed++] = task;
            for (int child : children[task]) {
                if (--waiting[child] == 0) {
                    ready.add(child);
                }
            }
        }
        return placed;
    }

    static int[][] children(int[][] parents) {
        int n = parents.length;
        int[] count = new int[n];
        for (int[] of : parents) {
            for (int parent : of) {
                count[parent]++;
            }
        }
        int[][] children = new int[n][];
        for (int i = 0; i < n; i++) {
            children[i] = new int[count[i]];
            count[i] = 0;
        }
        for (int child = 0; child < n; child++) {
            for (int parent : parents[child]) {
                children[parent][count[parent]++] = child;
            }
        }
        return children;
    }
}
