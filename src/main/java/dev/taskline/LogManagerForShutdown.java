package dev.taskline;

import java.util.logging.LogManager;

/**
 * java.util.logging closes its handlers in a shutdown hook of its own, which races ours: what the
 * node logs while it drains on SIGTERM would be lost. This manager ignores that reset until our
 * hook has finished.
 */
public final class LogManagerForShutdown extends LogManager {

    private static volatile LogManagerForShutdown instance;
    private volatile boolean mayReset;

    public LogManagerForShutdown() {
        instance = this;
    }

    @Override
    public void reset() {
        if (mayReset) {
            super.reset();
        }
    }

    /** Our shutdown is done: logging may close now. */
    static void shutdownDone() {
        LogManagerForShutdown manager = instance;
        if (manager != null) {
            manager.mayReset = true;
            manager.reset();
        }
    }
}
