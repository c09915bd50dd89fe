package dev.taskline.model;

import io.vertx.core.Future;
import io.vertx.core.json.JsonArray;

/**
 * Makes a running flow task's {@code spawn} list into the tasks its success will add to its flow:
 * read, checked as any task is, keyed and wired. The workers (in-process and remote) call it; the
 * flows part implements it, so neither knows the other.
 */
public interface SpawnPlanner {

    /**
     * The spawn of task {@code spawner} (of tenant {@code tenant}, null: none); fails with an
     * InvalidTaskException naming the problem when a task of it breaks a rule, or the spawner is in
     * no flow.
     */
    Future<Spawn> plan(Task spawner, JsonArray tasks);
}
