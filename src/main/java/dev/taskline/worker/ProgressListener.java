package dev.taskline.worker;

import java.util.UUID;

/** Hears every progress report of a running task, before the throttled journal write. */
@FunctionalInterface
public interface ProgressListener {
    void progress(UUID taskId, int percent, String message);
}
