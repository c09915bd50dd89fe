package dev.taskline.model;

import java.util.List;

/**
 * A flow with a page of its tasks, as {@code GET /api/flows/{id}} shows it: how many of them are in
 * each state, and {@code next}, the task id the following page starts after (null: the last page).
 */
public record FlowView(
        FlowRecord flow, java.util.Map<TaskState, Integer> counts, List<FlowTaskView> tasks, java.util.UUID next) {}
