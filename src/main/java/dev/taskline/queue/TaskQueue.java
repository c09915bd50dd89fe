package dev.taskline.queue;

import dev.taskline.config.QueueConfig;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashSet;
import java.util.List;
import java.util.PriorityQueue;
import java.util.Set;
import java.util.UUID;

/**
 * One named queue's waiting tasks on this node, bounded by its capacity.
 *
 * <p>Admission reserves room before it journals a submission and fills the reservation after the
 * commit, so that concurrent submissions can never overshoot the capacity. The queue also tracks
 * every task id this node holds anywhere (reserved, waiting, running), so that page-in never loads
 * a second copy of one.
 *
 * <p>Thread-safe: HTTP and worker verticles run on different event loops. The lock is held only for
 * a few heap operations.
 */
public final class TaskQueue {

  /** Higher priority first, then the earlier arrival. */
  static final Comparator<QueuedTask> ORDER = Comparator
      .comparingInt(QueuedTask::priority).reversed()
      .thenComparingLong(QueuedTask::enqueuedAtMillis)
      .thenComparing(QueuedTask::id);

  private final QueueConfig config;
  private final PriorityQueue<QueuedTask> waiting = new PriorityQueue<>(ORDER);
  private final Set<UUID> held = new HashSet<>();
  private int reserved;
  private Runnable onAvailable = () -> { };
  private Runnable onRoom = () -> { };
  private boolean journalHasMore;

  public TaskQueue(QueueConfig config) {
    this.config = config;
  }

  public String name() {
    return config.name();
  }

  public QueueConfig config() {
    return config;
  }

  /** Called (outside the lock) whenever tasks were added; the worker uses it to wake up. */
  public synchronized void onAvailable(Runnable listener) {
    this.onAvailable = listener;
  }

  /**
   * Called (outside the lock) when the queue falls to half its capacity while the journal is known
   * to hold more waiting work than fitted: recovery uses it to page in at once instead of waiting
   * for its next timed pass.
   */
  public synchronized void onRoom(Runnable listener) {
    this.onRoom = listener;
  }

  /** Recovery found more waiting tasks in the journal than this queue had room for. */
  public synchronized void journalHasMore(boolean more) {
    this.journalHasMore = more;
  }

  /**
   * Reserves room for tasks about to be journaled. False when they would not fit: waiting plus
   * reserved may never exceed capacity.
   */
  public boolean tryReserve(Collection<UUID> ids) {
    synchronized (this) {
      if (waiting.size() + reserved + ids.size() > config.capacity()) {
        return false;
      }
      reserved += ids.size();
      held.addAll(ids);
      return true;
    }
  }

  /** The journal refused the reserved tasks: give the room back. */
  public synchronized void cancelReservation(Collection<UUID> ids) {
    reserved -= ids.size();
    held.removeAll(ids);
  }

  /** The reserved tasks are journaled: they now wait for a worker. */
  public void fillReservation(List<QueuedTask> tasks) {
    Runnable listener;
    synchronized (this) {
      reserved -= tasks.size();
      waiting.addAll(tasks);
      listener = onAvailable;
    }
    listener.run();
  }

  /**
   * Adds tasks read back from the journal (start-up, page-in), skipping any this node already
   * holds and any beyond capacity. Returns how many were added.
   */
  public int offer(List<QueuedTask> tasks) {
    int added = 0;
    Runnable listener;
    synchronized (this) {
      for (QueuedTask task : tasks) {
        if (waiting.size() + reserved >= config.capacity()) {
          break;
        }
        if (held.add(task.id())) {
          waiting.add(task);
          added++;
        }
      }
      listener = onAvailable;
    }
    if (added > 0) {
      listener.run();
    }
    return added;
  }

  /** The next task to run, or null. The task stays held until {@link #release}. */
  public QueuedTask poll() {
    QueuedTask task;
    Runnable listener = null;
    synchronized (this) {
      task = waiting.poll();
      if (task != null && journalHasMore && waiting.size() + reserved <= config.capacity() / 2) {
        journalHasMore = false;
        listener = onRoom;
      }
    }
    if (listener != null) {
      listener.run();
    }
    return task;
  }

  /** This node is done with the task (finished, lost or handed back to the journal). */
  public synchronized void release(UUID id) {
    held.remove(id);
  }

  public synchronized int waiting() {
    return waiting.size();
  }

  /** Room left for new tasks: capacity less waiting and reserved. */
  public synchronized int room() {
    return config.capacity() - waiting.size() - reserved;
  }

  /** Every id this node holds, for page-in to skip. */
  public synchronized List<UUID> heldIds() {
    return new ArrayList<>(held);
  }

  /** Age of the oldest waiting task by arrival, in ms at {@code nowMillis}; 0 when none wait. */
  public synchronized long oldestWaitingAgeMs(long nowMillis) {
    long oldest = Long.MAX_VALUE;
    for (QueuedTask task : waiting) {
      oldest = Math.min(oldest, task.enqueuedAtMillis());
    }
    return oldest == Long.MAX_VALUE ? 0 : Math.max(0, nowMillis - oldest);
  }
}
