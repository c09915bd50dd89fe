package dev.taskline.model;

/**
 * A result left out of an answer that could carry many (a stream's events) for its weight, {@code
 * bytes} of JSON text: its reader reads it from the task, one at a time.
 */
public record OmittedResult(long bytes) {}
