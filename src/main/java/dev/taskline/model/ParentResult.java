package dev.taskline.model;

/**
 * What one of a flow task's parents ended with, as the task reads it when it starts: its key in the
 * flow, its state, and its result (or, for a parent that did not succeed, its error).
 */
public record ParentResult(String key, TaskState state, Object result, Object error) {

    /** What a reader of {@code parents} gets for it: the result, or for a parent that did not succeed its error. */
    public Object value() {
        return state == TaskState.SUCCEEDED ? result : error;
    }
}
