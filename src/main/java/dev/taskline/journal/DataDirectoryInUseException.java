package dev.taskline.journal;

import java.io.IOException;
import java.nio.file.Path;

/** The data directory is held by a node that is running: this one must not start on it. */
public final class DataDirectoryInUseException extends IOException {

    DataDirectoryInUseException(Path dir, Long holder) {
        super("the data directory " + dir + " is in use by a running Taskline node"
                + (holder == null ? "" : " (pid " + holder + ")")
                + "; it and its PostgreSQL are left alone. Stop that node first, or give this one a directory"
                + " of its own (TASKLINE_DATA_DIR, or journal.dataDir in the config)");
    }
}
