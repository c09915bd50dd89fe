package dev.taskline.events;

import dev.taskline.model.Event;
import dev.taskline.model.TaskSnapshot;
import dev.taskline.model.TaskState;
import io.vertx.core.Handler;
import java.util.List;
import java.util.UUID;

/**
 * Where a {@link TaskStream} writes, in order: one snapshot, then transitions (each with its
 * journal event id, unique on the stream), live progress, results, and the end. The HTTP layer
 * renders it as Server-Sent Events.
 */
public interface StreamSink {

    /** Where the followed tasks stand as the stream opens. */
    void snapshot(List<TaskSnapshot> tasks);

    /**
     * A journaled transition. A terminal one carries the outcome: {@code result} for a success
     * (null otherwise), {@code error} for a failure or cancellation that has one.
     */
    void state(Event event, Object result, Object error);

    /** The task's outcome again, right after its terminal transition, for clients that only listen for results; not journaled. */
    void result(UUID taskId, TaskState state, Object result, Object error);

    /** A progress report of a running task; not journaled. */
    void progress(UUID taskId, int percent, String message);

    /** Every followed task has finished and every transition is out. */
    void end();

    /** A write buffer that is full asks the stream to wait; state events stay in the journal meanwhile. */
    boolean full();

    /** Called once when the buffer has room again. */
    void onDrain(Handler<Void> handler);

    void close();
}
