package dev.taskline.admission;

import dev.taskline.journal.NewTask;
import java.util.List;
import java.util.UUID;

/**
 * What a submission became: its tasks (and batch), journaled. {@code replayed} when an
 * Idempotency-Key matched an earlier request: the tasks are that request's, and their payloads are
 * not repeated.
 */
public record Admitted(UUID batchId, List<NewTask> tasks, boolean replayed) {
}
