package dev.taskline.model;

/**
 * What a compensating cancel found: the task's state before (null: no such task for the caller),
 * and the task when this woke it (it was suspended), for this node's queue to hold.
 */
public record Woken(TaskState before, Task task) {}
