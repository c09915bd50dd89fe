package dev.taskline.service;

import dev.taskline.config.QueueConfig;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.model.QueueControl;
import dev.taskline.model.TaskState;
import dev.taskline.model.TaskView;
import java.util.List;
import java.util.UUID;

/** What the service answers with, beyond the journal's own records. */
public final class Views {

    private Views() {}

    /** A page of tasks, newest first; {@code next} is the cursor for the following page, null on the last. */
    public record TaskPage(List<TaskView> tasks, UUID next) {}

    /** Which tasks a list asks for; null filters match all. */
    public record TaskFilter(TaskState state, String queue, String type, UUID after, int limit) {}

    /** What a cancel did to one task: cancelled at once, or asked to stop while it runs. */
    public record Cancellation(UUID id, boolean stopping) {}

    /** What a batch cancel did, task by task, counted. */
    public record BatchCancellation(UUID batchId, int cancelled, int cancelling, int alreadyFinished) {}

    /**
     * One queue on this node: its limits, its custody counts, what it refused and fenced, its rates, its
     * switches; {@code expired}, of the finished, those not started by their deadline (expired by this
     * node's sweep; a tenant's key: its tasks in the journal).
     */
    public record QueueView(
            String name,
            long waiting,
            long running,
            long scheduled,
            int slots,
            int capacity,
            int scheduledCapacity,
            int tenantLimit,
            long accepted,
            long finished,
            long unfinished,
            Long rejected,
            Long fencedWrites,
            Long leaseTakeovers,
            Double lagSeconds,
            QueueMeters.Rates rates,
            Integer claimedAhead,
            Integer finishing,
            QueueControl control,
            QueueConfig.KeyLimits keyLimits,
            Integer heldByKeys,
            QueueConfig.RateLimit rateLimit,
            Integer heldByRate,
            long expired) {}

    /**
     * The node's queues added up; {@code accepted - finished == unfinished} at every reading. For a
     * tenant's key, that tenant's tasks in the journal; the node's meters (rejections, rates) are not
     * kept per tenant and are null there.
     */
    public record Stats(
            long accepted,
            long finished,
            Long rejected,
            long waiting,
            long scheduled,
            long running,
            QueueMeters.Rates rates,
            long expired) {
        public long unfinished() {
            return waiting + scheduled + running;
        }
    }

    /** One item of a batch of remote writes, answered on its own: its outcome, or why it was refused. */
    public record ItemResult<T>(UUID id, T outcome, Throwable failure) {}

    /** A key just issued: its secret, shown this once. */
    public record IssuedKey(String id, String secret, String tenant, List<String> scopes, List<String> queues) {}

    /** A key as an admin lists it, never its secret or hash; {@code source} "config" or "api". */
    public record KeyInfo(
            String id,
            String tenant,
            List<String> scopes,
            List<String> queues,
            String source,
            java.time.Instant createdAt,
            String createdBy,
            java.time.Instant revokedAt,
            String revokedBy) {}

    /** One item of a batch of remote writes: the task, its lease token, and the result or progress. */
    public record LeaseWrite(
            UUID id,
            String lease,
            io.vertx.core.json.JsonObject result,
            Integer percent,
            String message,
            io.vertx.core.json.JsonArray spawn) {}

    /** Whether the node takes work: not while it drains, nor while its journal does not answer. */
    public enum Readiness {
        UP,
        SHUTTING_DOWN,
        JOURNAL_DOWN
    }
}
