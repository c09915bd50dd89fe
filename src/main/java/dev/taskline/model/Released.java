package dev.taskline.model;

import java.util.UUID;

/**
 * A lease that lapsed: the task went back to pending, or ({@code failed}) ended failed, its attempts
 * and the takeovers allowed past them spent.
 */
public record Released(UUID id, String queue, boolean failed) {}
