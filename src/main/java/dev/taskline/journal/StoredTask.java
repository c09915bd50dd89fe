package dev.taskline.journal;

import java.time.Instant;
import java.util.UUID;

/**
 * A waiting task read back from the journal (start-up, page-in, retry); the payload as JSON text,
 * the tenant null when it was submitted without one.
 */
public record StoredTask(
    UUID id, String queue, String type, String payloadJson, int priority, long leaseVersion,
    int attempt, int maxAttempts, Long timeoutMs, Instant runAt, String tenant) {
}
