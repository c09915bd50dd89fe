package dev.taskline.model.problem;

import dev.taskline.support.IsoTime;
import io.vertx.core.json.JsonObject;
import java.time.Instant;

/**
 * A task of the submission would not start by its deadline: the queue's backlog says so, or the
 * queue is paused. The whole submission is refused and nothing was journaled.
 */
public final class DeadlineUnmeetableException extends ProblemException {

    private final String queue;
    private final int index;
    private final Instant startBy;
    private final Instant estimatedStartAt;
    private final Long estimatedWaitMs;
    private final boolean paused;
    private final long retryAfterSeconds;

    /**
     * @param index            the task's place in its batch; -1 for a single task
     * @param estimatedStartAt when it would start; null when its queue is paused (no start to expect)
     */
    public DeadlineUnmeetableException(
            String queue,
            int index,
            Instant startBy,
            Instant estimatedStartAt,
            Long estimatedWaitMs,
            boolean paused,
            long retryAfterSeconds) {
        super(
                429,
                "deadline-unmeetable",
                "Deadline unmeetable",
                (index < 0 ? "the task" : "tasks[" + index + "]") + " would not start by its deadline "
                        + startBy + ": "
                        + (paused
                                ? "queue '" + queue + "' is paused"
                                : "queue '" + queue + "' would start it at about " + estimatedStartAt + ", in "
                                        + estimatedWaitMs + " ms"));
        this.queue = queue;
        this.index = index;
        this.startBy = startBy;
        this.estimatedStartAt = estimatedStartAt;
        this.estimatedWaitMs = estimatedWaitMs;
        this.paused = paused;
        this.retryAfterSeconds = retryAfterSeconds;
    }

    public String queue() {
        return queue;
    }

    /** The task's place in its batch; -1 for a single task. */
    public int index() {
        return index;
    }

    public Instant startBy() {
        return startBy;
    }

    /** Null when the queue is paused. */
    public Instant estimatedStartAt() {
        return estimatedStartAt;
    }

    /** Null when the queue is paused. */
    public Long estimatedWaitMs() {
        return estimatedWaitMs;
    }

    public boolean paused() {
        return paused;
    }

    @Override
    public Long retryAfterSeconds() {
        return retryAfterSeconds;
    }

    @Override
    public JsonObject extensions() {
        JsonObject estimate = new JsonObject()
                .put("queue", queue)
                .put("startBy", IsoTime.format(startBy))
                .put("estimatedStartAt", estimatedStartAt == null ? null : IsoTime.format(estimatedStartAt))
                .put("estimatedWaitMs", estimatedWaitMs)
                .put("paused", paused)
                .put("retryAfterSeconds", retryAfterSeconds);
        if (index >= 0) {
            estimate.put("taskIndex", index);
        }
        return estimate;
    }

    @Override
    public boolean refusesWork() {
        return true;
    }
}
