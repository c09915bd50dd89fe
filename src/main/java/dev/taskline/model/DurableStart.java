package dev.taskline.model;

import java.util.Map;

/**
 * What an attempt of a durable task starts from: the steps done so far, by name in the order they
 * were reached, each result as the journal's JSON text; and whether the task is compensating (a
 * cancel asked it to undo what it did).
 */
public record DurableStart(boolean compensating, Map<String, String> steps) {

    public static final DurableStart NONE = new DurableStart(false, Map.of());
}
