package dev.taskline.queue;

import dev.taskline.model.Task;
import java.util.List;
import java.util.UUID;

/**
 * One queue as the parts that hand it tasks from the journal see it (recovery's page-in and
 * wake-ups, flows' and durable steps' woken tasks, an operator's retry), and drop them from it (a
 * cancel, a deadline, a lease that lapsed for good).
 *
 * <p>Only recovery says whether the journal holds more waiting work than fitted ({@link
 * #journalHasMore}): the queue asks for a page-in when it has drained to half while it does. A
 * part that offers tasks it just woke uses {@link #offerOrLeave}, which says so itself for those
 * that did not fit.
 */
public interface QueueCustody extends QueueReadings {

    /**
     * Adds tasks read back from the journal (start-up, page-in, a retry), skipping any this node
     * already holds and any beyond capacity. Returns how many were added.
     */
    int offer(List<Task> tasks);

    /**
     * As {@link #offer}, for {@code due}: those of {@code made} tasks the journal just made pending
     * (woken, or let go by their parents) that are due now. Whatever of the {@code made} was not
     * added stays in the journal, and the queue has recovery page it in once it has drained to half.
     */
    int offerOrLeave(List<Task> due, int made);

    /**
     * Drops a task from waiting or scheduled (it was cancelled, or expired). True when it was there;
     * a task already handed to a worker is not affected.
     */
    boolean remove(UUID id);

    /** Recovery's reading: the journal holds more waiting tasks than this queue had room for, or not. */
    void journalHasMore(boolean more);

    /** Every id this node holds, for page-in to skip. */
    List<UUID> heldIds();

    /**
     * How many of the tasks this node holds the journal shows as pending and due now: waiting,
     * scheduled and due, being claimed, or being inserted.
     */
    int heldPending(long nowMillis);

    /**
     * How many more tasks this node could start now: free slots that no task here waits for. What a
     * wake-up from another node pages in, and no more: a node holds in its line only what it can start,
     * so that work another node could start now is not hoarded here.
     */
    int startableNow();
}
