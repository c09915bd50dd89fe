package dev.taskline.journal;

import io.vertx.core.json.JsonObject;
import java.time.OffsetDateTime;
import java.util.Map;
import java.util.UUID;

/**
 * The parameters of each statement that takes more than {@link Sql#MOST_LOOSE}, one record a
 * statement, its components named as the statement names them ({@code leaseVersions} binds {@code
 * :lease_versions}): the order PostgreSQL numbers them in is the statement's business, kept by
 * {@link Sql.Bound}, never by hand. The arrays are columns: one element per row a grouped
 * statement writes.
 */
final class Params {

    private Params() {}

    /** Which record binds each statement; {@link Sql#bound} refuses any other. */
    static final Map<String, Class<? extends Record>> FOR_STATEMENT = Map.ofEntries(
            Map.entry("insert_tasks", InsertTasks.class),
            Map.entry("claim", Claim.class),
            Map.entry("claim_gated", ClaimGated.class),
            Map.entry("finish", Finish.class),
            Map.entry("heartbeat", Heartbeat.class),
            Map.entry("progress", Progress.class),
            Map.entry("page_in", PageIn.class),
            Map.entry("page_in_fair", PageIn.class),
            Map.entry("idempotency_claim", IdempotencyClaim.class),
            Map.entry("list_tasks", ListTasks.class),
            Map.entry("stream_events", StreamEvents.class),
            Map.entry("list_tenant_tasks", ListTenantTasks.class),
            Map.entry("key_insert", KeyInsert.class),
            Map.entry("session_revoke", SessionRevoke.class),
            Map.entry("node_register", NodeRegister.class),
            Map.entry("schedule_create", ScheduleCreate.class),
            Map.entry("ticks_decide", TicksDecide.class),
            Map.entry("insert_flow", InsertFlow.class),
            Map.entry("list_tenant_flows", ListTenantFlows.class),
            Map.entry("flow_tasks", FlowTasks.class),
            Map.entry("flow_spawn", FlowSpawn.class),
            Map.entry("step_write", StepWrite.class),
            Map.entry("suspend_open", SuspendOpen.class),
            Map.entry("signal_send", SignalSend.class),
            Map.entry("events_receive", EventsIn.class));

    /** New tasks, and the batches they make ({@code newBatches}, one element each), in one insert. */
    record InsertTasks(
            UUID[] ids,
            String[] queues,
            String[] types,
            String[] payloads,
            Integer[] priorities,
            OffsetDateTime[] runAt,
            Integer[] maxAttempts,
            Long[] timeoutMs,
            UUID[] batchIds,
            OffsetDateTime now,
            UUID[] newBatches,
            Integer[] batchSizes,
            String[] workerIds,
            OffsetDateTime[] leaseExpiresAt,
            UUID[] batchFirstIds,
            UUID[] batchLastIds,
            String[] tenants,
            String[] concurrencyKeys,
            OffsetDateTime[] startBy,
            String[] schedules,
            OffsetDateTime[] scheduledFor) {}

    record Claim(
            UUID[] ids,
            Long[] expectedVersions,
            String[] workerIds,
            OffsetDateTime[] leaseExpiresAt,
            OffsetDateTime now) {}

    record ClaimGated(
            UUID[] ids,
            Long[] expectedVersions,
            String[] workerIds,
            OffsetDateTime[] leaseExpiresAt,
            OffsetDateTime now,
            String[] queues,
            String[] concurrencyKeys,
            Integer[] keyLimits,
            String[] buckets,
            Integer[] rateTasks,
            Long[] ratePerMs) {}

    record Finish(
            UUID[] ids,
            Long[] leaseVersions,
            String[] workerIds,
            String[] toStates,
            String[] results,
            String[] errors,
            String[] reasons,
            OffsetDateTime[] runAt,
            Integer[] attemptDeltas,
            Integer[] versionBumps,
            OffsetDateTime now,
            Boolean[] cancelWins,
            Boolean[] dropDeadlines) {}

    record Heartbeat(
            UUID[] ids,
            Long[] leaseVersions,
            String[] workerIds,
            OffsetDateTime[] leaseExpiresAt,
            OffsetDateTime now) {}

    record Progress(
            UUID[] ids,
            Long[] leaseVersions,
            String[] workerIds,
            Integer[] percents,
            String[] messages,
            OffsetDateTime now) {}

    /** For page_in and page_in_fair alike: the same read, in two orders. */
    record PageIn(String queue, OffsetDateTime now, UUID[] heldIds, int most, double agingPerSecond) {}

    record IdempotencyClaim(
            String key, String requestHash, JsonObject response, OffsetDateTime now, OffsetDateTime expiresAt) {}

    record ListTasks(
            String state,
            String tables,
            String queue,
            String type,
            UUID after,
            int most,
            int scan,
            int ranges,
            long maxInline,
            long maxPage) {}

    /** A stream's next page of events (see stream_events). */
    record StreamEvents(UUID[] ids, long after, int most, long maxInline, long maxPage) {}

    record ListTenantTasks(
            String state,
            String tables,
            String queue,
            String type,
            UUID after,
            int most,
            int scan,
            int ranges,
            String tenant,
            long maxInline,
            long maxPage) {}

    /** A session signed out, and what a key past its bound of single sign-outs writes instead (session_revoke). */
    record SessionRevoke(
            String digest,
            OffsetDateTime expiresAt,
            OffsetDateTime now,
            String revokedBy,
            int most,
            String floorDigest,
            OffsetDateTime floorExpires) {}

    record KeyInsert(
            String id,
            String hash,
            String tenant,
            String[] scopes,
            String[] queues,
            OffsetDateTime now,
            String createdBy,
            boolean configKeys) {}

    record NodeRegister(
            String id,
            String version,
            String address,
            long expiresMs,
            String queues,
            String queuesHash,
            long configEpoch) {}

    record ScheduleCreate(UUID id, String name, JsonObject spec, String origin, OffsetDateTime now, String changedBy) {}

    record TicksDecide(
            UUID[] scheduleIds,
            OffsetDateTime[] tickAt,
            UUID[] taskIds,
            String[] reasons,
            String[] details,
            Long[] ticks,
            Boolean[] skipIfRunning,
            OffsetDateTime now,
            String nodeId) {}

    /** A whole flow: its row, its tasks (roots pending or claimed, the others blocked) and its edges. */
    record InsertFlow(
            UUID[] flowIds,
            String[] names,
            String[] tenants,
            Integer[] sizes,
            Integer[] edgeCounts,
            UUID[] firstIds,
            UUID[] lastIds,
            OffsetDateTime now,
            UUID[] ids,
            UUID[] taskFlows,
            String[] taskTenants,
            String[] keys,
            String[] queues,
            String[] types,
            String[] payloads,
            Integer[] priorities,
            OffsetDateTime[] runAt,
            Integer[] maxAttempts,
            Long[] timeoutMs,
            String[] workerIds,
            OffsetDateTime[] leaseExpiresAt,
            String[] concurrencyKeys,
            OffsetDateTime[] startBy,
            Long[] startWithinMs,
            String[] joins,
            Integer[] parentsLeft,
            UUID[] edgeParents,
            UUID[] edgeChildren) {}

    record ListTenantFlows(String state, String name, UUID after, int most, String tenant) {}

    /** A page of a flow's tasks (see flow_tasks). */
    record FlowTasks(UUID id, UUID after, int most, long maxInline, long maxPage) {}

    /** Tasks a running flow task adds to its flow, with its success (see flow_spawn). */
    record FlowSpawn(
            UUID spawner,
            Long leaseVersion,
            String workerId,
            OffsetDateTime now,
            UUID flowId,
            UUID[] ids,
            String[] keys,
            String[] queues,
            String[] types,
            String[] payloads,
            Integer[] priorities,
            Long[] delaysMs,
            Integer[] maxAttempts,
            Long[] timeoutMs,
            String[] concurrencyKeys,
            Long[] startWithinMs,
            String[] joins,
            Integer[] parentsLeft,
            UUID[] edgeParents,
            UUID[] edgeChildren,
            UUID[] tails,
            Integer maxTasks,
            Long maxEdges,
            Integer maxParents) {}

    /** Steps handlers ran, one element each (see step_write). */
    record StepWrite(
            UUID[] ids,
            Long[] leaseVersions,
            String[] workerIds,
            String[] names,
            String[] results,
            OffsetDateTime now,
            int most) {}

    /** An attempt ending suspended on a wait (see suspend_open); {@code until} null for none. */
    record SuspendOpen(
            UUID id,
            long leaseVersion,
            String workerId,
            String step,
            String waitFor,
            OffsetDateTime until,
            OffsetDateTime now) {}

    record SignalSend(UUID id, String tenant, String name, String payload, String key, OffsetDateTime now, int most) {}

    /** Events received, one element each ({@code tenants} '' for none). */
    record EventsIn(
            String[] tenants,
            String[] ids,
            String[] names,
            String[] datas,
            OffsetDateTime now,
            int mostWoken,
            boolean again) {}
}
