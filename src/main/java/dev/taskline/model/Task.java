package dev.taskline.model;

import java.time.Instant;
import java.util.UUID;

/**
 * A task as the journal stores it and as a queue holds it while it waits: what it is (queue, type,
 * payload, priority, limits, batch, tenant) and where it stands (due time, lease version, attempts
 * made). The admission builds it, the journal reads it back at start-up, page-in and retry, and a
 * worker carries it from one attempt to the next with {@link #pendingAgain}.
 *
 * <p>A full queue holds tens of thousands of these, and each young collection copies the ones that
 * are still waiting, so they are kept small: the payload stays the JSON text it was journaled as
 * (parsed once, when an attempt starts), the due time is epoch milliseconds, and the queue and
 * type names, the same few for every task, are shared instances rather than one copy per task
 * ({@link Builder#build} interns them; {@link #pendingAgain} keeps the instances it has).
 * {@code batchId}, {@code tenant} and {@code concurrencyKey} are null for a task submitted without them; {@code
 * leaseVersion} is the version the journal had when the task was read or written, which a claim
 * must still find; {@code attempt} is the number of attempts already made; {@code startByMillis} is
 * the deadline of its first start, 0 for none (the journal enforces it; a queue only keeps such a
 * task from being claimed ahead of a slot, see {@link #deadlineHolds}); {@code schedule} and {@code
 * scheduledForMillis} name the schedule and the tick a scheduled task was made for (null and 0 for
 * any other task); {@code flowId} the flow it is a task of (null for none), {@code flowKey} its key there, and {@code hasParents}
 * whether it waits for parents in it (whose results it reads as it starts); {@code durable} whether
 * it was suspended or resumed (its attempts read its steps as they start, see {@link #readsSteps}).
 */
public record Task(
        UUID id,
        String queue,
        String type,
        String payloadJson,
        int priority,
        int maxAttempts,
        Long timeoutMs,
        UUID batchId,
        String tenant,
        long dueAtMillis,
        long leaseVersion,
        int attempt,
        String concurrencyKey,
        long startByMillis,
        String schedule,
        long scheduledForMillis,
        UUID flowId,
        String flowKey,
        boolean hasParents,
        boolean durable) {

    /** A new task, not journaled yet: version 0, no attempt made, due now unless {@link Builder#runAt} says. */
    public static Builder builder(UUID id, String queue, String type) {
        return new Builder(id, queue, type);
    }

    public Instant runAt() {
        return Instant.ofEpochMilli(dueAtMillis);
    }

    /** Whether it must start by a deadline still: it has one, and no attempt has been made. */
    public boolean deadlineHolds() {
        return startByMillis != 0 && attempt == 0;
    }

    /** The same task after an attempt ended and it went back to pending, due at {@code dueAtMillis}. */
    public Task pendingAgain(long leaseVersion, int attempt, long dueAtMillis) {
        return copy(dueAtMillis, leaseVersion, attempt, startByMillis, durable);
    }

    /**
     * The same task, known to have journaled steps or to have been suspended: its attempts read what
     * its steps did before they start (see {@code durable}).
     */
    public Task asDurable() {
        return durable ? this : copy(dueAtMillis, leaseVersion, attempt, startByMillis, true);
    }

    /**
     * Whether the attempt {@code lease} starts must read the task's steps first: the task was
     * suspended, or resumed, or an earlier attempt may have journaled steps. A first attempt
     * reads them only if its handler asks. The lease tells, not {@code attempt}: a task journaled
     * running at admission is held with the attempt it is in, a claimed one with those before it.
     */
    public boolean readsSteps(Lease lease) {
        return durable || lease.attempt() > 1;
    }

    /** The tick a scheduled task was made for; null for a task no schedule made. */
    public Instant scheduledFor() {
        return schedule == null ? null : Instant.ofEpochMilli(scheduledForMillis);
    }

    /** The same task without its first start's deadline: its handler ran, so it did start (see the journal's Attempts). */
    public Task withoutDeadline() {
        return startByMillis == 0 ? this : copy(dueAtMillis, leaseVersion, attempt, 0, durable);
    }

    /** This task with where it stands changed; what it is stays. */
    private Task copy(long dueAtMillis, long leaseVersion, int attempt, long startByMillis, boolean durable) {
        return new Task(
                id,
                queue,
                type,
                payloadJson,
                priority,
                maxAttempts,
                timeoutMs,
                batchId,
                tenant,
                dueAtMillis,
                leaseVersion,
                attempt,
                concurrencyKey,
                startByMillis,
                schedule,
                scheduledForMillis,
                flowId,
                flowKey,
                hasParents,
                durable);
    }

    /** Named construction: the defaults are a payload of {@code {}}, priority 0 and one attempt. */
    public static final class Builder {
        private final UUID id;
        private final String queue;
        private final String type;
        private String payloadJson = "{}";
        private int priority;
        private int maxAttempts = 1;
        private Long timeoutMs;
        private UUID batchId;
        private String tenant;
        private long dueAtMillis;
        private long leaseVersion;
        private int attempt;
        private String concurrencyKey;
        private long startByMillis;
        private String schedule;
        private long scheduledForMillis;
        private UUID flowId;
        private String flowKey;
        private boolean hasParents;
        private boolean durable;

        private Builder(UUID id, String queue, String type) {
            this.id = id;
            this.queue = queue;
            this.type = type;
        }

        /** The payload as JSON text: encoded once, it is both what the journal stores and what the queue holds. */
        public Builder payloadJson(String json) {
            this.payloadJson = json;
            return this;
        }

        public Builder priority(int priority) {
            this.priority = priority;
            return this;
        }

        public Builder maxAttempts(int maxAttempts) {
            this.maxAttempts = maxAttempts;
            return this;
        }

        public Builder timeoutMs(Long timeoutMs) {
            this.timeoutMs = timeoutMs;
            return this;
        }

        public Builder batch(UUID batchId) {
            this.batchId = batchId;
            return this;
        }

        public Builder tenant(String tenant) {
            this.tenant = tenant;
            return this;
        }

        /** Tasks of one key run at most the queue's limit for it at once, across nodes (null: no key). */
        public Builder concurrencyKey(String key) {
            this.concurrencyKey = key;
            return this;
        }

        /** The deadline of its first start (null: none), kept to the millisecond here. */
        public Builder startBy(Instant startBy) {
            this.startByMillis = startBy == null ? 0 : startBy.toEpochMilli();
            return this;
        }

        /** Made by schedule {@code name} for its tick at {@code tick} (a null name: no schedule). */
        public Builder scheduled(String name, Instant tick) {
            this.schedule = name;
            this.scheduledForMillis = name == null ? 0 : tick.toEpochMilli();
            return this;
        }

        /** A task of flow {@code flowId} (null: none): its handler may read its parents' results. */
        public Builder flow(UUID flowId) {
            this.flowId = flowId;
            return this;
        }

        /** Its key in its flow (null: none). */
        public Builder flowKey(String key) {
            this.flowKey = key;
            return this;
        }

        /** A flow task that waits for parents (a join): it reads their results when it starts. */
        public Builder hasParents(boolean hasParents) {
            this.hasParents = hasParents;
            return this;
        }

        /** Suspended or resumed before, or with steps journaled: its attempts read them first. */
        public Builder durable(boolean durable) {
            this.durable = durable;
            return this;
        }

        public Builder runAt(Instant runAt) {
            this.dueAtMillis = runAt.toEpochMilli();
            return this;
        }

        public Builder dueAtMillis(long dueAtMillis) {
            this.dueAtMillis = dueAtMillis;
            return this;
        }

        /** Where a task read back from the journal stands: the version a claim must find, attempts made. */
        public Builder leased(long leaseVersion, int attempt) {
            this.leaseVersion = leaseVersion;
            this.attempt = attempt;
            return this;
        }

        public Task build() {
            return new Task(
                    id,
                    queue.intern(),
                    type.intern(),
                    payloadJson,
                    priority,
                    maxAttempts,
                    timeoutMs,
                    batchId,
                    tenant,
                    dueAtMillis,
                    leaseVersion,
                    attempt,
                    concurrencyKey,
                    startByMillis,
                    schedule,
                    scheduledForMillis,
                    flowId,
                    flowKey,
                    hasParents,
                    durable);
        }
    }
}
