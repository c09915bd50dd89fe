package dev.taskline.worker;

import dev.taskline.journal.Journal;
import dev.taskline.metrics.QueueMeters;
import dev.taskline.model.ClaimGate;
import dev.taskline.model.GatedClaim;
import dev.taskline.model.Lease;
import dev.taskline.model.Task;
import dev.taskline.queue.QueueSlots;
import io.vertx.core.Future;
import io.vertx.core.Vertx;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.util.HashMap;
import java.util.HashSet;
import java.util.Map;
import java.util.Set;

/**
 * Claims for the local and the remote workers alike: a plain claim for a task its queue does not
 * gate, else one through its gate (a concurrency key's bound, a rate budget), which the journal
 * decides under the gate's locks. A task a gate refuses stays in its queue's custody, held until
 * the gate may have room: a full key is tried again soon, then less often while it stays full, so
 * that many full keys do not turn into a stream of refused claims; a spent rate budget when the
 * journal says its window frees a start, not before (a claim then could only be refused again). One
 * per verticle, used on its context only.
 */
final class GatedClaims {

    static final long KEY_FIRST_MS = 25;
    static final long KEY_MOST_MS = 200;
    /**
     * How long a spent budget's lift waits at most before it looks at the clock again: a clock that
     * is moved on (an injected one, a system clock stepped) is noticed within this, not only when the
     * window's remaining wait measured at the refusal is over.
     */
    static final long LIFT_CHECK_MS = 250;

    private final Vertx vertx;
    private final Journal journal;
    private final Clock clock;
    /** Per queue and key: the delay of the retry set, for those with one set. */
    private final Map<String, Long> keyWaiting = new HashMap<>();
    /** Per queue and key: the delay the next retry will use. */
    private final Map<String, Long> keyNext = new HashMap<>();
    /** Per queue and budget: those whose lift is set. */
    private final Set<String> rateWaiting = new HashSet<>();

    GatedClaims(Vertx vertx, Journal journal, Clock clock) {
        this.vertx = vertx;
        this.journal = journal;
        this.clock = clock;
    }

    /**
     * What a claim came to: a lease; else {@code held} when a gate refused it and its queue holds it
     * (the caller lets it out of its hands, not out of the queue); else lost (taken or ended
     * elsewhere), to be given back.
     */
    record Claim(Lease lease, boolean held) {}

    /** Claims {@code task}, handed out by {@code queue} at {@code stage}; tells the queue when the claim returned. */
    Future<Claim> claim(
            QueueSlots queue, Task task, String worker, Duration leaseFor, QueueSlots.Stage stage, QueueMeters meters) {
        ClaimGate gate = queue.gate(task);
        if (gate == null) {
            return journal.claim(task.id(), task.leaseVersion(), worker, leaseFor)
                    .onComplete(done -> queue.claimReturned())
                    .map(lease -> new Claim(lease, false));
        }
        long freedBefore = queue.keysFreed();
        return journal.claimGated(task.id(), task.leaseVersion(), worker, leaseFor, gate)
                .onComplete(done -> queue.claimReturned())
                .map(answer -> {
                    if (answer.refused() == GatedClaim.Refusal.KEY_FULL) {
                        meters.keyFull();
                        boolean held = queue.keyFull(task, stage);
                        if (held && queue.keysFreed() != freedBefore) {
                            // Another node said it freed room while this claim was out: the refusal may
                            // predate it.
                            queue.retryKey(gate.key());
                        } else if (held) {
                            keyFull(queue, gate.key());
                        }
                        return new Claim(null, held);
                    }
                    if (answer.refused() == GatedClaim.Refusal.RATE_FULL) {
                        meters.rateLimited();
                        boolean held = queue.rateFull(task, stage);
                        if (held) {
                            rateFull(queue, gate.bucket(), answer.retryAt());
                        }
                        return new Claim(null, held);
                    }
                    if (answer.lease() != null && gate.keyLimit() > 0) {
                        // A claim of the key landed: the next time it is full, retry soon again.
                        keyNext.remove(queue.name() + "/" + gate.key());
                    }
                    return new Claim(answer.lease(), false);
                });
    }

    /** The key was full: its tasks get back in line after the next delay (one timer per key at a time). */
    private void keyFull(QueueSlots queue, String key) {
        String id = queue.name() + "/" + key;
        if (keyWaiting.containsKey(id)) {
            return;
        }
        long delay = keyNext.getOrDefault(id, KEY_FIRST_MS);
        keyNext.put(id, Math.min(KEY_MOST_MS, delay * 2));
        keyWaiting.put(id, delay);
        vertx.setTimer(delay, t -> {
            keyWaiting.remove(id);
            queue.retryKey(key);
        });
    }

    /** The budget was spent: its tasks may be claimed again at {@code retryAt} by the node's clock (one timer per budget at a time). */
    private void rateFull(QueueSlots queue, String bucket, Instant retryAt) {
        String id = queue.name() + "/" + bucket;
        if (rateWaiting.add(id)) {
            long at = retryAt == null ? clock.millis() + KEY_FIRST_MS : retryAt.toEpochMilli();
            liftAt(queue, bucket, id, at);
        }
    }

    private void liftAt(QueueSlots queue, String bucket, String id, long atMillis) {
        vertx.setTimer(Math.max(1, Math.min(LIFT_CHECK_MS, atMillis - clock.millis())), t -> {
            if (clock.millis() < atMillis) {
                liftAt(queue, bucket, id, atMillis);
                return;
            }
            rateWaiting.remove(id);
            queue.liftRate(bucket);
        });
    }
}
