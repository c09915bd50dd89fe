package dev.taskline.model;

import java.time.Instant;
import java.util.List;

/**
 * Where suspended tasks are told of: the flows part's waker implements it, the workers (ending an
 * attempt suspended) and the services (a signal or event that wakes a task) call it, so that neither
 * knows the other.
 */
public interface Waking {

    /** A suspended task is due at {@code at}: the waker's timer must fire by then. */
    void wakeAt(Instant at);

    /** Tasks woken (by time, a signal, an event, a cancel) for this node's queues to hold. */
    void hold(List<Task> tasks);
}
