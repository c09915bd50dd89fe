package dev.taskline.model;

/** A step as the journal kept it: its result (JSON text), and whether this write was the first. */
public record StepWritten(String resultJson, boolean first) {}
