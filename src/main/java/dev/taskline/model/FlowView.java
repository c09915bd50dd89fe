package dev.taskline.model;

import java.util.List;

/** A flow with its tasks, as {@code GET /api/flows/{id}} shows it. */
public record FlowView(FlowRecord flow, List<FlowTaskView> tasks) {}
