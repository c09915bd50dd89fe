package dev.taskline.testing;

import java.util.Collection;
import java.util.Set;
import java.util.UUID;
import java.util.concurrent.CopyOnWriteArraySet;
import java.util.concurrent.Semaphore;
import java.util.concurrent.TimeUnit;

/**
 * The signal tests wait on instead of polling: every in-process node started by {@link TestNode}
 * (and every journal {@link TestNode#otherJournal} makes) tells it which tasks got journal events,
 * after the write committed. One registry for the whole test JVM, so that a test reading node A
 * hears a transition node B journaled; task ids are unique, so tests do not hear each other's.
 *
 * <p>A signal says only "read again": a {@link Watch} keeps one pending wake-up however many
 * commits come meanwhile, and the waiter reads the task after each, never trusting what changed.
 */
public final class TaskSignals {

    private static final Set<Watch> WATCHES = new CopyOnWriteArraySet<>();

    private TaskSignals() {}

    /** Called by the nodes' journals after each commit, on whatever thread completed it. */
    public static void changed(Collection<UUID> ids) {
        for (Watch watch : WATCHES) {
            if (watch.tasks == null || ids.stream().anyMatch(watch.tasks::contains)) {
                watch.poke();
            }
        }
    }

    /** Starts listening for events of {@code tasks} (null: of any task); close it when done. */
    public static Watch watch(Set<UUID> tasks) {
        Watch watch = new Watch(tasks == null ? null : Set.copyOf(tasks));
        WATCHES.add(watch);
        return watch;
    }

    /** One waiter's subscription. */
    public static final class Watch implements AutoCloseable {

        private final Set<UUID> tasks;
        private final Semaphore pokes = new Semaphore(0);

        private Watch(Set<UUID> tasks) {
            this.tasks = tasks;
        }

        private void poke() {
            // Only one wake-up need be pending: the waiter reads the whole state again anyway.
            if (pokes.availablePermits() == 0) {
                pokes.release();
            }
        }

        /**
         * Forgets the signals so far; call it just before reading the state, so that a commit after
         * the read always wakes the next {@link #await}.
         */
        public void clear() {
            pokes.drainPermits();
        }

        /** Waits up to {@code nanos} for an event of the watched tasks; false when none came. */
        public boolean await(long nanos) throws InterruptedException {
            return pokes.tryAcquire(Math.max(0, nanos), TimeUnit.NANOSECONDS);
        }

        @Override
        public void close() {
            WATCHES.remove(this);
        }
    }
}
