package dev.taskline.model;

import java.util.UUID;

/** A task found by a cancel: its state before, and after. */
public record Cancelled(UUID id, TaskState before, TaskState after) {}
