package dev.taskline.service;

import dev.taskline.events.StreamSink;
import dev.taskline.model.Event;
import dev.taskline.model.TaskSnapshot;
import dev.taskline.model.TaskState;
import io.vertx.core.Handler;
import java.util.List;
import java.util.UUID;

/** A stream's sink for a caller who may not know which key acted: its transitions pass without it. */
final class WithoutActors implements StreamSink {

    private final StreamSink sink;

    WithoutActors(StreamSink sink) {
        this.sink = sink;
    }

    @Override
    public void snapshot(List<TaskSnapshot> tasks) {
        sink.snapshot(tasks);
    }

    @Override
    public void state(Event event, Object result, Object error) {
        sink.state(event.withoutActor(), result, error);
    }

    @Override
    public void result(UUID taskId, TaskState state, Object result, Object error) {
        sink.result(taskId, state, result, error);
    }

    @Override
    public void progress(UUID taskId, int percent, String message) {
        sink.progress(taskId, percent, message);
    }

    @Override
    public void end() {
        sink.end();
    }

    @Override
    public boolean full() {
        return sink.full();
    }

    @Override
    public void onDrain(Handler<Void> handler) {
        sink.onDrain(handler);
    }

    @Override
    public void close() {
        sink.close();
    }
}
