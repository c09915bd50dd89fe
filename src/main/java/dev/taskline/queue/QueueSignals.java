package dev.taskline.queue;

/**
 * The one port through which the queues call back up, a method per signal, each with the name of
 * the queue that gives it. The wiring implements it and gives it to every queue once ({@link
 * QueueRegistry#signals}); until then the queues signal {@link #NONE}.
 *
 * <p>A queue signals outside its lock, on the thread that changed it (an HTTP or a worker event
 * loop, the promoter's, recovery's), after the change: a listener may call the queue back, and
 * hops to its own event loop for anything more than a flag or a hand-off. A part that is not
 * deployed ignores what it is told.
 */
public interface QueueSignals {

    /**
     * Tasks came into line, or were admitted straight to a slot, or the queue was paused or resumed:
     * its worker (the local one, or the remote workers' waiting claims) looks again.
     */
    void available(String queue);

    /**
     * The queue fell to half its capacity while the journal is known to hold more waiting work than
     * fitted: recovery pages in at once instead of waiting for its next timed pass.
     */
    void room(String queue);

    /** A task was scheduled: the promoter sets its timer, if this one is due sooner. */
    void scheduled(String queue);

    /**
     * Due tasks came into line here that this node cannot start now, its slots all taken: another
     * node may, and is told.
     */
    void held(String queue);

    /**
     * A task of a bounded key left a worker here after its end or its return to pending was
     * journaled: room under its key, which other nodes' tasks of that key may wait for.
     */
    void keyFreed(String queue);

    /** A slot freed with nothing waiting here for it: another node may hold work for it. */
    void idleSlot(String queue);

    /** Hears nothing. */
    QueueSignals NONE = new QueueSignals() {
        @Override
        public void available(String queue) {}

        @Override
        public void room(String queue) {}

        @Override
        public void scheduled(String queue) {}

        @Override
        public void held(String queue) {}

        @Override
        public void keyFreed(String queue) {}

        @Override
        public void idleSlot(String queue) {}
    };
}
