package dev.taskline.worker;

import dev.taskline.model.TaskState;
import java.time.Instant;

/** What became of a remote attempt ended by its worker: pending again at {@code retryAt}, or ended (failed, cancelled). */
public record Ended(TaskState state, Instant retryAt) {}
