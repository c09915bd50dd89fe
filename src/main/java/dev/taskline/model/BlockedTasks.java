package dev.taskline.model;

/**
 * A tenant's blocked flow tasks in a queue, as this node last knew them: tasks in no queue's
 * custody that its tenant limit counts all the same.
 */
@FunctionalInterface
public interface BlockedTasks {

    BlockedTasks NONE = (queue, tenant) -> 0;

    int of(String queue, String tenant);
}
