package dev.taskline.model;

import java.util.UUID;

/**
 * What a worker holds while it runs a task. Every write it makes names the lease; the journal
 * accepts the write only while the task's row still carries the same worker and version.
 */
public record Lease(UUID taskId, String workerId, long version, int attempt) {}
