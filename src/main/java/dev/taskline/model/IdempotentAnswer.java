package dev.taskline.model;

import java.util.List;
import java.util.UUID;

/**
 * What an Idempotency-Key stands for: the hash of the request that took it, and the tasks (and
 * batch) that request was answered with. The tasks carry what an answer shows of them (id, queue,
 * type, priority, due time, deadline), not their payloads, and are shown waiting. {@link
 * #VANISHED} is a key whose owner was seen but whose row could not be read back (it expired in
 * between): it matches no request.
 */
public record IdempotentAnswer(String requestHash, UUID batchId, List<Insert> tasks) {

    public static final IdempotentAnswer VANISHED = new IdempotentAnswer(null, null, List.of());
}
