package dev.taskline.admission;

import dev.taskline.model.Insert;
import java.util.List;
import java.util.UUID;

/**
 * What a submission became: its tasks (and batch), journaled, each waiting or already claimed by
 * a worker with a free slot. {@code replayed} when an Idempotency-Key matched an earlier request:
 * the tasks are that request's, shown as they were then answered, without their payloads.
 */
public record Admitted(UUID batchId, List<Insert> tasks, boolean replayed) {}
