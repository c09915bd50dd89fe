package dev.taskline.queue;

/** One queue as an operator's switches reach it: paused, or running. */
public interface QueueSwitch extends QueueReadings {

    /**
     * Pauses or resumes the queue. Either way its worker is told (see {@link QueueSignals#available}):
     * on a pause, to hand back the tasks it holds leased and has not started; on a resume, to start
     * again.
     */
    void paused(boolean pause);
}
