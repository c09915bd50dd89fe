package dev.taskline.model;

import java.util.UUID;

/** A task that was not started by its deadline and ended expired. */
public record Expired(UUID id, String queue) {}
