package dev.taskline.handler;

/**
 * How a durable sleep or wait ends the attempt it runs in: the task goes back to pending, due when
 * the wait ends, and runs again from the start, its steps returning what they returned. Not a
 * failure, and not to be caught: a handler returns the future it fails, or lets its chain fail
 * with it. (The node suspends the task even if a handler recovers from it.)
 */
public final class Suspension extends RuntimeException {

    public Suspension(String step) {
        super("suspended in step '" + step + "'", null, false, false);
    }
}
