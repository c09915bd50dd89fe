package dev.taskline.journal;

import dev.taskline.model.FlowInsert;
import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import java.time.OffsetDateTime;
import java.util.List;
import java.util.UUID;

/**
 * A flow's tasks and edges as the columns insert_flow and flow_spawn bind (one array element a task
 * or an edge). A root's join, parents and startWithinMs are null (its deadline is its insert's);
 * a task that waits has no deadline yet, only its startWithinMs.
 */
final class FlowColumns {

    final UUID[] ids;
    final String[] keys;
    final String[] queues;
    final String[] types;
    final String[] payloads;
    final Integer[] priorities;
    final OffsetDateTime[] runAt;
    final Integer[] maxAttempts;
    final Long[] timeoutMs;
    final String[] workerIds;
    final OffsetDateTime[] leaseExpiresAt;
    final String[] concurrencyKeys;
    final OffsetDateTime[] startBy;
    final Long[] startWithinMs;
    final String[] joins;
    final Integer[] parentsLeft;
    final UUID[] edgeParents;
    final UUID[] edgeChildren;

    FlowColumns(List<FlowInsert.Node> tasks, List<FlowInsert.Edge> edges) {
        int n = tasks.size();
        ids = new UUID[n];
        keys = new String[n];
        queues = new String[n];
        types = new String[n];
        payloads = new String[n];
        priorities = new Integer[n];
        runAt = new OffsetDateTime[n];
        maxAttempts = new Integer[n];
        timeoutMs = new Long[n];
        workerIds = new String[n];
        leaseExpiresAt = new OffsetDateTime[n];
        concurrencyKeys = new String[n];
        startBy = new OffsetDateTime[n];
        startWithinMs = new Long[n];
        joins = new String[n];
        parentsLeft = new Integer[n];
        for (int i = 0; i < n; i++) {
            FlowInsert.Node node = tasks.get(i);
            Insert insert = node.insert();
            Task task = insert.task();
            ids[i] = task.id();
            keys[i] = node.key();
            queues[i] = task.queue();
            types[i] = task.type();
            payloads[i] = task.payloadJson();
            priorities[i] = task.priority();
            runAt[i] = Times.utc(insert.runAt());
            maxAttempts[i] = task.maxAttempts();
            timeoutMs[i] = task.timeoutMs();
            workerIds[i] = insert.workerId();
            leaseExpiresAt[i] = insert.leaseUntil() == null ? null : Times.utc(insert.leaseUntil());
            concurrencyKeys[i] = task.concurrencyKey();
            startBy[i] = node.root() && insert.startBy() != null ? Times.utc(insert.startBy()) : null;
            startWithinMs[i] = node.root() ? null : node.startWithinMs();
            joins[i] = node.join();
            parentsLeft[i] = node.root() ? null : node.parents();
        }
        edgeParents = new UUID[edges.size()];
        edgeChildren = new UUID[edges.size()];
        for (int i = 0; i < edgeParents.length; i++) {
            edgeParents[i] = edges.get(i).parent();
            edgeChildren[i] = edges.get(i).child();
        }
    }
}
