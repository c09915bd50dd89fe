package dev.taskline.model;

import java.util.List;
import java.util.UUID;

/**
 * What an Idempotency-Key stands for: the hash of the request that took it, and the tasks (and
 * batch) that request was answered with. The tasks carry what an answer shows of them (id, queue,
 * type, priority, due time, deadline), not their payloads, and are shown waiting. An answer
 * without a request hash matches no request.
 */
public record IdempotentAnswer(String requestHash, UUID batchId, List<Insert> tasks) {}
