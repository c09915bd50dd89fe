package dev.taskline.model;

/**
 * A step as the journal kept it: its result (JSON text), and whether this write was the first;
 * {@code full} when it was not written, its task having as many steps as it may.
 */
public record StepWritten(String resultJson, boolean first, boolean full) {}
