package dev.taskline.admission;

/** The queue has no room for the submission; nothing was journaled. */
public class QueueFullException extends RuntimeException {

  private final String queue;
  private final int capacity;
  private final int backlog;
  private final int requested;
  private final long retryAfterSeconds;

  public QueueFullException(String queue, int capacity, int backlog, int requested, long retryAfterSeconds) {
    super("queue '" + queue + "' is full: " + backlog + " of " + capacity + " places taken, "
        + requested + " requested", null, false, false);
    this.queue = queue;
    this.capacity = capacity;
    this.backlog = backlog;
    this.requested = requested;
    this.retryAfterSeconds = retryAfterSeconds;
  }

  public String queue() {
    return queue;
  }

  public int capacity() {
    return capacity;
  }

  public int backlog() {
    return backlog;
  }

  public int requested() {
    return requested;
  }

  public long retryAfterSeconds() {
    return retryAfterSeconds;
  }
}
