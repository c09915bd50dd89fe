package dev.taskline.events;

import io.vertx.core.Future;

/**
 * Who must learn that this node began to follow tasks: other nodes announce their task events only
 * while some node follows any, so they are told when the first stream opens, not at the next
 * heartbeat. The wiring gives it to the hub once, as it makes it.
 */
@FunctionalInterface
public interface Followers {

    /** Tells the others; completes once they have been told. */
    Future<?> following();
}
