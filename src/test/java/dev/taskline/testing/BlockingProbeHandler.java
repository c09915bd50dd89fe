package dev.taskline.testing;

import dev.taskline.handler.TaskContext;
import dev.taskline.handler.TaskHandler;
import io.vertx.core.Context;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;

/** {@code blocking-probe}: a blocking handler that reports which kind of thread ran it. */
public final class BlockingProbeHandler implements TaskHandler {

    @Override
    public String type() {
        return "blocking-probe";
    }

    @Override
    public boolean blocking() {
        return true;
    }

    @Override
    public Future<JsonObject> run(TaskContext context) {
        context.progress(50, "from a worker thread");
        return Future.succeededFuture(new JsonObject()
                .put("onWorkerThread", Context.isOnWorkerThread())
                .put("onEventLoop", Context.isOnEventLoopThread()));
    }
}
