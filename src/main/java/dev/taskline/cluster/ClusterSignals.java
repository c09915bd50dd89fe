package dev.taskline.cluster;

import io.vertx.core.Future;

/**
 * What the other nodes on the journal tell this one, a method per channel of the listening
 * connection: the one port through which the cluster calls back up, implemented by the wiring and
 * given once ({@link Cluster#signals}). Each is called on the listening connection's event loop and
 * must not block.
 *
 * <p>After the listening connection is lost and made again, nothing heard meanwhile is known, so
 * each is called as if everything changed: a queue of null means every queue.
 */
public interface ClusterSignals {

    /** Work became due on {@code queue} (null: on every queue) that another node cannot start. */
    void due(String queue);

    /** A keyed task of {@code queue} (null: of any queue) left running elsewhere: room under its key. */
    void keyFreed(String queue);

    /** A schedule was made, changed or deleted, or one of its ticks decided. */
    void schedulesChanged();

    /**
     * A queue was paused or resumed: the switches read again. The cluster runs it one at a time, a
     * burst folded into one more run, as it does the two below.
     */
    Future<?> readSwitches();

    /** A key was issued or revoked, or a session signed out: the keys read again. */
    Future<?> readKeys();

    /** Another node journaled task events while this one follows tasks: its streams catch up. */
    Future<?> catchStreamsUp();
}
