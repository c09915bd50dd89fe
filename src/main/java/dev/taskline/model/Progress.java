package dev.taskline.model;

import java.util.UUID;

/** The latest progress a running task's lease holder reported. */
public record Progress(UUID taskId, int percent, String message) {}
