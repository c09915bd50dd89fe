package dev.taskline.model;

/**
 * What a claim of one task must respect beyond the task's own state, decided in the journal so that
 * every node sharing it sees one count: its concurrency key's bound ({@code keyLimit} tasks of
 * {@code key} running at once; 0: none) and its rate budget ({@code rateTasks} starts in any {@code
 * ratePerMs}; {@code bucket} null: none).
 *
 * @param bucket the budget's name within its queue: "" for the queue's own, else the concurrency key
 *               that has one of its own (migration 000013)
 */
public record ClaimGate(String queue, String key, int keyLimit, String bucket, int rateTasks, long ratePerMs) {}
