package dev.taskline.model;

/**
 * What a signal found: the task's state (null: no such task for the sender), the signal's id (null:
 * none kept, the task had ended), whether its Idempotency-Key was sent before (the first signal's
 * id is answered), and the task when the signal woke it, for this node's queue to hold.
 */
public record SignalSent(TaskState state, Long signalId, boolean repeated, Task woke) {}
