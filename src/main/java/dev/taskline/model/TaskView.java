package dev.taskline.model;

import java.time.Instant;
import java.util.List;
import java.util.UUID;

/**
 * A task as a reader sees it: its definition, where it stands, and (for one task read by id) its
 * history in journal order; {@code history} is null in lists. {@code payload}, {@code result} and
 * {@code error} are the JSON values stored (objects, arrays, text, numbers), null when absent.
 * {@code startedAt} is when the journal recorded the first claim: for a task dispatched at
 * admission, the insert's timestamp, taken just before its commit (the handler starts after it).
 * {@code startBy} is the deadline of its first start, null for none (or once retried by hand).
 * {@code schedule} and {@code scheduledFor} name the schedule and tick that made it, null for a
 * task submitted otherwise. {@code leftOut} is null unless a page left the payload, result and
 * error out (then they are null here).
 */
public record TaskView(
        UUID id,
        String queue,
        String type,
        TaskState state,
        int priority,
        int attempt,
        int maxAttempts,
        long leaseVersion,
        Object payload,
        Object result,
        Object error,
        int progressPercent,
        String progressMessage,
        Instant runAt,
        Instant createdAt,
        Instant updatedAt,
        Instant startedAt,
        Instant finishedAt,
        UUID batchId,
        String tenant,
        Long timeoutMs,
        String workerId,
        Instant leaseExpiresAt,
        List<Event> history,
        String concurrencyKey,
        Instant startBy,
        String schedule,
        Instant scheduledFor,
        UUID flowId,
        String flowKey,
        LeftOut leftOut) {

    /** Events of a task's history its view shows; the rest are read in pages. */
    public static final int HISTORY_SHOWN = 100;

    /**
     * A page's mark on a task whose payload, result and error it left out (http.maxInlineBytes,
     * http.maxPageBytes): what each weighs as JSON text. The task's own read carries them.
     */
    public record LeftOut(long payloadBytes, long resultBytes, long errorBytes) {}

    /** The same task with its history's transitions without the keys that made them. */
    public TaskView withoutActors() {
        if (history == null) {
            return this;
        }
        return new TaskView(
                id,
                queue,
                type,
                state,
                priority,
                attempt,
                maxAttempts,
                leaseVersion,
                payload,
                result,
                error,
                progressPercent,
                progressMessage,
                runAt,
                createdAt,
                updatedAt,
                startedAt,
                finishedAt,
                batchId,
                tenant,
                timeoutMs,
                workerId,
                leaseExpiresAt,
                history.stream().map(Event::withoutActor).toList(),
                concurrencyKey,
                startBy,
                schedule,
                scheduledFor,
                flowId,
                flowKey,
                leftOut);
    }
}
