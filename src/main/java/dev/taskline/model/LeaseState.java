package dev.taskline.model;

import java.util.UUID;

/** Who holds a task now: its state, lease version, and worker (null when none). */
public record LeaseState(UUID id, TaskState state, long leaseVersion, String workerId) {}
