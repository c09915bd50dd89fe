package dev.taskline.model;

import java.util.UUID;

/** A lease that lapsed and went back to pending. */
public record Released(UUID id, String queue) {}
