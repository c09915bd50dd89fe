package dev.taskline.model;

import java.time.Instant;
import java.util.List;

/** A key as an admin lists it: never its hash. */
public record KeyRecord(
        String id,
        String tenant,
        List<String> scopes,
        List<String> queues,
        Instant createdAt,
        String createdBy,
        Instant revokedAt,
        String revokedBy) {}
