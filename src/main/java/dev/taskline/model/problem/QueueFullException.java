package dev.taskline.model.problem;

import io.vertx.core.json.JsonObject;

/** The queue has no room for the submission; nothing was journaled. */
public final class QueueFullException extends ProblemException {

    private final String queue;
    private final int capacity;
    private final int backlog;
    private final int requested;
    private final long retryAfterSeconds;

    private final boolean scheduled;

    public QueueFullException(String queue, int capacity, int backlog, int requested, long retryAfterSeconds) {
        this(queue, capacity, backlog, requested, retryAfterSeconds, false);
    }

    /** @param scheduled true when the bound hit is the one on delayed tasks, not on waiting ones */
    public QueueFullException(
            String queue, int capacity, int backlog, int requested, long retryAfterSeconds, boolean scheduled) {
        super(
                429,
                scheduled ? "scheduled-full" : "queue-full",
                scheduled ? "Scheduled tasks full" : "Queue full",
                "queue '" + queue + "' is full: " + backlog + " of " + capacity + (scheduled ? " scheduled" : "")
                        + " places taken, " + requested + " requested");
        this.scheduled = scheduled;
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

    public boolean scheduled() {
        return scheduled;
    }

    @Override
    public Long retryAfterSeconds() {
        return retryAfterSeconds;
    }

    @Override
    public JsonObject extensions() {
        return new JsonObject()
                .put("queue", queue)
                .put("capacity", capacity)
                .put("backlog", backlog)
                .put("requested", requested)
                .put("retryAfterSeconds", retryAfterSeconds);
    }

    @Override
    public boolean refusesWork() {
        return true;
    }
}
