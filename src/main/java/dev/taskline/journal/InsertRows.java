package dev.taskline.journal;

import dev.taskline.model.Insert;
import dev.taskline.model.Task;
import dev.taskline.model.TaskIds;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;

/**
 * New tasks as {@code insert_tasks} takes them: a column per field, and the batches they make,
 * each with its size and its id range (the range in which its tasks are found, see migration
 * 000004). What submissions, idempotent submissions and schedules' ticks insert alike.
 */
final class InsertRows {

    private InsertRows() {}

    /** The statement's parameters for every task of {@code groups}, journaled at {@code now}. */
    static Params.InsertTasks params(List<List<Insert>> groups, OffsetDateTime now) {
        int n = 0;
        for (List<Insert> group : groups) {
            n += group.size();
        }
        Columns c = new Columns(n);
        Map<UUID, UUID[]> batchRanges = new HashMap<>();
        Map<UUID, Integer> batchSizes = new HashMap<>();
        int i = 0;
        for (List<Insert> group : groups) {
            for (Insert insert : group) {
                c.set(i++, insert);
                Task task = insert.task();
                if (task.batchId() != null) {
                    batchSizes.merge(task.batchId(), 1, Integer::sum);
                    UUID[] range = batchRanges.computeIfAbsent(task.batchId(), b -> new UUID[] {task.id(), task.id()});
                    if (TaskIds.compare(task.id(), range[0]) < 0) {
                        range[0] = task.id();
                    }
                    if (TaskIds.compare(task.id(), range[1]) > 0) {
                        range[1] = task.id();
                    }
                }
            }
        }
        UUID[] batches = batchSizes.keySet().toArray(new UUID[0]);
        Integer[] sizes = new Integer[batches.length];
        UUID[] firsts = new UUID[batches.length];
        UUID[] lasts = new UUID[batches.length];
        for (int b = 0; b < batches.length; b++) {
            sizes[b] = batchSizes.get(batches[b]);
            firsts[b] = batchRanges.get(batches[b])[0];
            lasts[b] = batchRanges.get(batches[b])[1];
        }
        return new Params.InsertTasks(
                c.ids,
                c.queues,
                c.types,
                c.payloads,
                c.priorities,
                c.runAts,
                c.maxAttempts,
                c.timeouts,
                c.batchIds,
                now,
                batches,
                sizes,
                c.workers,
                c.leaseUntil,
                firsts,
                lasts,
                c.tenants,
                c.keys,
                c.startBys,
                c.schedules,
                c.scheduledFor);
    }

    /** How many events inserting {@code groups} journals: a task inserted claimed journals its claim too. */
    static int events(List<List<Insert>> groups) {
        int total = 0;
        for (List<Insert> group : groups) {
            for (Insert insert : group) {
                total += insert.claimed() ? 2 : 1;
            }
        }
        return total;
    }

    /** The per-task columns of {@code insert_tasks}, one array a column. */
    private static final class Columns {
        final UUID[] ids;
        final String[] queues;
        final String[] types;
        final String[] payloads;
        final Integer[] priorities;
        final OffsetDateTime[] runAts;
        final Integer[] maxAttempts;
        final Long[] timeouts;
        final UUID[] batchIds;
        final String[] workers;
        final OffsetDateTime[] leaseUntil;
        final String[] tenants;
        final String[] keys;
        final OffsetDateTime[] startBys;
        final String[] schedules;
        final OffsetDateTime[] scheduledFor;
        private final Times.Memo<Instant, OffsetDateTime> runAtUtc = new Times.Memo<>(Times::utc);
        private final Times.Memo<Instant, OffsetDateTime> leaseUtc = new Times.Memo<>(Times::utc);
        private final Times.Memo<Instant, OffsetDateTime> startByUtc = new Times.Memo<>(Times::utc);

        Columns(int n) {
            ids = new UUID[n];
            queues = new String[n];
            types = new String[n];
            payloads = new String[n];
            priorities = new Integer[n];
            runAts = new OffsetDateTime[n];
            maxAttempts = new Integer[n];
            timeouts = new Long[n];
            batchIds = new UUID[n];
            workers = new String[n];
            leaseUntil = new OffsetDateTime[n];
            tenants = new String[n];
            keys = new String[n];
            startBys = new OffsetDateTime[n];
            schedules = new String[n];
            scheduledFor = new OffsetDateTime[n];
        }

        void set(int i, Insert insert) {
            Task task = insert.task();
            ids[i] = task.id();
            queues[i] = task.queue();
            types[i] = task.type();
            payloads[i] = task.payloadJson();
            priorities[i] = task.priority();
            runAts[i] = runAtUtc.get(insert.runAt());
            maxAttempts[i] = task.maxAttempts();
            timeouts[i] = task.timeoutMs();
            batchIds[i] = task.batchId();
            workers[i] = insert.workerId();
            leaseUntil[i] = insert.leaseUntil() == null ? null : leaseUtc.get(insert.leaseUntil());
            tenants[i] = task.tenant();
            keys[i] = task.concurrencyKey();
            startBys[i] = insert.startBy() == null ? null : startByUtc.get(insert.startBy());
            if (task.schedule() != null) {
                schedules[i] = task.schedule();
                scheduledFor[i] = Times.utc(task.scheduledFor());
            }
        }
    }
}
