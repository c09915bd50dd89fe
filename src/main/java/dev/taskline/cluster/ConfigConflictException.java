package dev.taskline.cluster;

import dev.taskline.model.LiveNode;

/**
 * A starting node defines a queue otherwise than a live node on the same journal does: it refuses
 * to start, unless told to take the definitions over.
 */
public final class ConfigConflictException extends RuntimeException {

    public ConfigConflictException(QueueDefinitions.Difference difference, LiveNode other) {
        super("queue '" + difference.queue() + "' is defined otherwise on live node " + other.id()
                + (other.address() == null ? "" : " (" + other.address() + ")") + ": its " + difference.field()
                + " is " + difference.theirs() + " there and " + difference.mine() + " here. Start every node with"
                + " the same definition, or, to roll out a new one, start this node with --take-over-config"
                + " (TASKLINE_TAKE_OVER_CONFIG=true) and then the others with the new one");
    }
}
