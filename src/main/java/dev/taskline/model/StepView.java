package dev.taskline.model;

import java.time.Instant;

/** A step as a task's reads show it: done with its result, or an open wait with its deadline. */
public record StepView(
        String name,
        boolean done,
        String resultJson,
        Instant until,
        String waitJson,
        int attempt,
        Instant at,
        long position) {}
