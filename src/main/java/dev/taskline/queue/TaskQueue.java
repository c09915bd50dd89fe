package dev.taskline.queue;

import dev.taskline.config.QueueConfig;
import java.util.ArrayList;
import java.util.Collection;
import java.util.Comparator;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.PriorityQueue;
import java.util.UUID;

/**
 * One named queue's tasks on this node: the waiting ones, bounded by {@code capacity}, and the
 * scheduled ones (delayed, or waiting out a retry's backoff), bounded by {@code scheduledCapacity}.
 *
 * <p>Waiting order is effective priority: {@code priority + agingPerSecond * seconds waited}. As
 * every waiting task ages at the same rate, that order never changes while tasks wait, so it is
 * the static key {@code priority - agingPerSecond * dueSeconds}; a heap keeps it, and a steady
 * stream of high-priority work cannot starve an old low-priority task.
 *
 * <p>Admission reserves room before it journals a submission and fills the reservation after the
 * commit, so concurrent submissions cannot overshoot the bounds. The queue also tracks every task
 * id this node holds anywhere (reserved, scheduled, waiting, running), so that page-in never loads
 * a second copy of one.
 *
 * <p>Thread-safe: HTTP and worker verticles run on different event loops. The lock is held only for
 * a few heap operations.
 */
public final class TaskQueue {

  private final QueueConfig config;
  private final PriorityQueue<QueuedTask> waiting;
  private final PriorityQueue<QueuedTask> scheduled =
      new PriorityQueue<>(Comparator.comparingLong(QueuedTask::dueAtMillis).thenComparing(QueuedTask::id));
  /** Every task in custody or reserved, with its tenant (null for none). */
  private final Map<UUID, String> held = new HashMap<>();
  /** Of those, how many each tenant has: what the queue's tenant limit bounds. */
  private final Map<String, Integer> byTenant = new HashMap<>();
  /** Tasks admitted straight to a slot (journaled claimed), for the worker to start first. */
  private final java.util.ArrayDeque<Dispatched> ready = new java.util.ArrayDeque<>();
  private int reserved;
  private int reservedScheduled;
  private Runnable onAvailable = () -> { };
  private Runnable onRoom = () -> { };
  private Runnable onScheduled = () -> { };
  private boolean journalHasMore;
  // Custody counts: a task enters this node's custody when it is admitted here or read back from
  // the journal, and leaves it when it ends here or is handed back. Kept under the same lock as
  // the queues, so that accepted - finished = waiting + scheduled + running holds at every read.
  private long accepted;
  private long finished;
  private int running;
  // Slots taken by tasks whose claimed insert has not committed yet: not in custody until then.
  private int dispatching;
  // Tasks handed to the worker whose claim has not returned: still pending in the journal.
  private int claiming;

  public TaskQueue(QueueConfig config) {
    this.config = config;
    this.waiting = new PriorityQueue<>(order(config.agingPerSecond()));
  }

  /** Highest effective priority first; among equals, the task due first, then the older id. */
  static Comparator<QueuedTask> order(double agingPerSecond) {
    return Comparator.comparingDouble((QueuedTask t) -> agingKey(t, agingPerSecond)).reversed()
        .thenComparingLong(QueuedTask::dueAtMillis)
        .thenComparing(QueuedTask::id);
  }

  static double agingKey(QueuedTask task, double agingPerSecond) {
    return task.priority() - agingPerSecond * (task.dueAtMillis() / 1000.0);
  }

  public String name() {
    return config.name();
  }

  public QueueConfig config() {
    return config;
  }

  /** The name under which this queue's worker on node {@code nodeId} holds leases. */
  public String workerId(String nodeId) {
    return nodeId + "/" + config.name();
  }

  /** Called (outside the lock) whenever tasks became waiting; the worker uses it to wake up. */
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

  /** Called (outside the lock) when a task was scheduled, so the promoter can set its timer. */
  public synchronized void onScheduled(Runnable listener) {
    this.onScheduled = listener;
  }

  /** Recovery found more waiting tasks in the journal than this queue had room for. */
  public synchronized void journalHasMore(boolean more) {
    this.journalHasMore = more;
  }

  /** What a reservation found: room taken, or why not. */
  public enum Room { RESERVED, QUEUE_FULL, TENANT_LIMIT }

  /**
   * Reserves room for tasks of {@code tenant} (null: none) about to be journaled. Waiting plus
   * reserved may never exceed capacity, nor one tenant's unfinished and reserved tasks its limit.
   */
  public Room tryReserve(Collection<UUID> ids, String tenant) {
    synchronized (this) {
      if (!tenantFits(tenant, ids.size())) {
        return Room.TENANT_LIMIT;
      }
      if (waiting.size() + reserved + ids.size() > config.capacity()) {
        return Room.QUEUE_FULL;
      }
      reserved += ids.size();
      hold(ids, tenant);
      return Room.RESERVED;
    }
  }

  /**
   * Takes slots for tasks about to be journaled as already claimed: only when nothing waits (they
   * must not overtake anyone) and enough slots are free. They count as running from here on.
   */
  public boolean tryDispatch(Collection<UUID> ids, String tenant) {
    synchronized (this) {
      if (!waiting.isEmpty() || running + dispatching + ids.size() > config.slots()
          || !tenantFits(tenant, ids.size())) {
        return false;
      }
      dispatching += ids.size();
      hold(ids, tenant);
      return true;
    }
  }

  /** The journal refused the dispatched tasks: free their slots. */
  public synchronized void cancelDispatch(Collection<UUID> ids) {
    dispatching -= ids.size();
    ids.forEach(this::release);
  }

  /** The dispatched tasks are journaled, claimed: hand them to the worker. */
  public void fillDispatch(List<Dispatched> tasks) {
    Runnable listener;
    synchronized (this) {
      dispatching -= tasks.size();
      running += tasks.size();
      accepted += tasks.size();
      ready.addAll(tasks);
      listener = onAvailable;
    }
    listener.run();
  }

  /** The next dispatched task, already running and leased, or null. */
  public synchronized Dispatched pollDispatched() {
    return ready.poll();
  }

  /** A task admitted straight to a slot, with the lease it was journaled under. */
  public record Dispatched(QueuedTask task, dev.taskline.journal.Lease lease) {
  }

  /** As {@link #tryReserve}, for tasks that will not be due for a while. */
  public Room tryReserveScheduled(Collection<UUID> ids, String tenant) {
    synchronized (this) {
      if (!tenantFits(tenant, ids.size())) {
        return Room.TENANT_LIMIT;
      }
      if (scheduled.size() + reservedScheduled + ids.size() > config.scheduledCapacity()) {
        return Room.QUEUE_FULL;
      }
      reservedScheduled += ids.size();
      hold(ids, tenant);
      return Room.RESERVED;
    }
  }

  /** The journal refused the reserved tasks: give the room back. */
  public synchronized void cancelReservation(Collection<UUID> ids, boolean scheduledTasks) {
    if (scheduledTasks) {
      reservedScheduled -= ids.size();
    } else {
      reserved -= ids.size();
    }
    ids.forEach(this::release);
  }

  /** The reserved tasks are journaled: they now wait for a worker. */
  public void fillReservation(List<QueuedTask> tasks) {
    Runnable listener;
    synchronized (this) {
      reserved -= tasks.size();
      accepted += tasks.size();
      waiting.addAll(tasks);
      listener = onAvailable;
    }
    listener.run();
  }

  /** The reserved delayed tasks are journaled: they wait for their time. */
  public void fillScheduledReservation(List<QueuedTask> tasks) {
    Runnable listener;
    synchronized (this) {
      reservedScheduled -= tasks.size();
      accepted += tasks.size();
      scheduled.addAll(tasks);
      listener = onScheduled;
    }
    listener.run();
  }

  /**
   * A task this node ran went back to pending with a future due time (a retry's backoff, a
   * snooze): hold it until then. When the scheduled set is full it is handed back instead, stays in
   * the journal alone and is paged in when due. True when it is held.
   */
  public boolean reschedule(QueuedTask task) {
    Runnable listener;
    synchronized (this) {
      running--;
      if (scheduled.size() + reservedScheduled >= config.scheduledCapacity()) {
        finished++;
        release(task.id());
        return false;
      }
      scheduled.add(task);
      listener = onScheduled;
    }
    listener.run();
    return true;
  }

  /** A task this node ran left its custody: it ended, or the journal says it is someone else's. */
  public synchronized void done(UUID id) {
    running--;
    finished++;
    release(id);
  }

  /**
   * Moves scheduled tasks that are due at {@code nowMillis} to waiting, as far as waiting has room.
   * Returns how many moved.
   */
  public int promoteDue(long nowMillis) {
    int moved = 0;
    Runnable listener;
    synchronized (this) {
      while (!scheduled.isEmpty() && scheduled.peek().dueAtMillis() <= nowMillis
          && waiting.size() + reserved < config.capacity()) {
        waiting.add(scheduled.poll());
        moved++;
      }
      listener = onAvailable;
    }
    if (moved > 0) {
      listener.run();
    }
    return moved;
  }

  /** When the earliest scheduled task is due, or {@link Long#MAX_VALUE} when none is scheduled. */
  public synchronized long nextDueMillis() {
    return scheduled.isEmpty() ? Long.MAX_VALUE : scheduled.peek().dueAtMillis();
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
        if (hold(task.id(), task.tenant())) {
          waiting.add(task);
          added++;
        }
      }
      accepted += added;
      listener = onAvailable;
    }
    if (added > 0) {
      listener.run();
    }
    return added;
  }

  /**
   * The next task to run, or null when none waits or every slot is taken. It counts as running
   * until {@link #done} or {@link #reschedule}.
   */
  public QueuedTask poll() {
    QueuedTask task;
    Runnable listener = null;
    synchronized (this) {
      task = running + dispatching < config.slots() ? waiting.poll() : null;
      if (task != null) {
        running++;
        claiming++;
      }
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

  /**
   * Drops a task from waiting or scheduled (it was cancelled). True when it was there; a task
   * already running is not affected.
   */
  public synchronized boolean remove(UUID id) {
    boolean removed = waiting.removeIf(t -> t.id().equals(id)) || scheduled.removeIf(t -> t.id().equals(id));
    if (removed) {
      release(id);
      finished++;
    }
    return removed;
  }

  /** One consistent reading of the custody counts. */
  public synchronized Counts counts() {
    return new Counts(accepted, finished, waiting.size(), scheduled.size(), running);
  }

  /** Custody counts; {@code accepted - finished == waiting + scheduled + running} always. */
  public record Counts(long accepted, long finished, int waiting, int scheduled, int running) {
    public long unfinished() {
      return (long) waiting + scheduled + running;
    }
  }

  public synchronized int waiting() {
    return waiting.size();
  }

  public synchronized int scheduled() {
    return scheduled.size();
  }

  /** Room left for new tasks: capacity less waiting and reserved. */
  public synchronized int room() {
    return config.capacity() - waiting.size() - reserved;
  }

  /** Every id this node holds, for page-in to skip. */
  public synchronized List<UUID> heldIds() {
    return new ArrayList<>(held.keySet());
  }

  /** Unfinished and reserved tasks of {@code tenant} in this queue. */
  public synchronized int tenantHeld(String tenant) {
    return byTenant.getOrDefault(tenant, 0);
  }

  private boolean tenantFits(String tenant, int wanted) {
    return tenant == null || config.tenantLimit() == 0
        || byTenant.getOrDefault(tenant, 0) + wanted <= config.tenantLimit();
  }

  private void hold(Collection<UUID> ids, String tenant) {
    for (UUID id : ids) {
      hold(id, tenant);
    }
  }

  /** Takes {@code id} into custody; false when it already was. */
  private boolean hold(UUID id, String tenant) {
    if (held.containsKey(id)) {
      return false;
    }
    held.put(id, tenant);
    if (tenant != null) {
      byTenant.merge(tenant, 1, Integer::sum);
    }
    return true;
  }

  private void release(UUID id) {
    String tenant = held.remove(id);
    if (tenant != null) {
      byTenant.computeIfPresent(tenant, (t, n) -> n == 1 ? null : n - 1);
    }
  }

  /** The worker's claim of a polled task returned (taken or lost): it is no longer pending here. */
  public synchronized void claimReturned() {
    claiming--;
  }

  /**
   * How many of the tasks this node holds the journal shows as pending and due now: waiting,
   * scheduled and due, being claimed, or being inserted.
   */
  public synchronized int heldPending(long nowMillis) {
    int pending = waiting.size() + claiming + reserved;
    for (QueuedTask task : scheduled) {
      if (task.dueAtMillis() <= nowMillis) {
        pending++;
      }
    }
    return pending;
  }

  /** How long the task first in line has waited, in ms at {@code nowMillis}; 0 when none wait. */
  public synchronized long oldestWaitingAgeMs(long nowMillis) {
    long oldest = Long.MAX_VALUE;
    for (QueuedTask task : waiting) {
      oldest = Math.min(oldest, task.dueAtMillis());
    }
    return oldest == Long.MAX_VALUE ? 0 : Math.max(0, nowMillis - oldest);
  }
}
