package dev.taskline.model;

import java.time.Instant;

/** A signal sent to a task and not yet taken by a wait. */
public record SignalView(String name, String payloadJson, Instant at, long id) {}
