package dev.taskline.http;

import dev.taskline.model.FlowAccepted;
import dev.taskline.model.FlowRecord;
import dev.taskline.model.FlowTaskView;
import dev.taskline.model.FlowView;
import dev.taskline.support.IsoTime;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.List;

/** Flows as the API shows them. */
final class FlowViews {

    private FlowViews() {}

    static JsonObject accepted(FlowAccepted accepted, String eventsUrl) {
        JsonArray tasks = new JsonArray();
        for (FlowAccepted.Member member : accepted.tasks()) {
            tasks.add(new JsonObject()
                    .put("key", member.key())
                    .put("id", member.id().toString())
                    .put("state", member.state()));
        }
        return new JsonObject()
                .put("flowId", accepted.flowId().toString())
                .put("state", "running")
                .put("eventsUrl", eventsUrl)
                .put("tasks", tasks);
    }

    /**
     * A flow with a page of its tasks. A result or error too heavy to show here is left out, with
     * {@code resultUrl}, the task's own read; {@code next} (with {@code nextUrl}) reads the tasks after.
     */
    static JsonObject flow(FlowView view, String eventsUrl, int limit) {
        JsonArray tasks = new JsonArray();
        for (FlowTaskView task : view.tasks()) {
            JsonObject json = new JsonObject()
                    .put("key", task.key())
                    .put("id", task.id().toString())
                    .put("queue", task.queue())
                    .put("type", task.type())
                    .put("state", task.state().sql())
                    .put("join", task.join())
                    .put("dependsOn", new JsonArray(List.copyOf(task.dependsOn())))
                    .put("attempt", task.attempt())
                    .put("result", task.result())
                    .put("error", task.error());
            if (task.leftOut()) {
                json.put("resultBytes", task.resultBytes())
                        .put("errorBytes", task.errorBytes())
                        .put("resultUrl", "/api/tasks/" + task.id());
            }
            tasks.add(json);
        }
        JsonObject byState = new JsonObject();
        view.counts().forEach((state, n) -> byState.put(state.sql(), n));
        String id = view.flow().id().toString();
        return summary(view.flow())
                .put("counts", byState)
                .put("eventsUrl", eventsUrl)
                .put("tasks", tasks)
                .put("next", view.next() == null ? null : view.next().toString())
                .put(
                        "nextUrl",
                        view.next() == null ? null : "/api/flows/" + id + "?after=" + view.next() + "&limit=" + limit);
    }

    static JsonObject summary(FlowRecord flow) {
        return new JsonObject()
                .put("id", flow.id().toString())
                .put("name", flow.name())
                .put("state", flow.state())
                .put("size", flow.size())
                .put("unfinished", flow.unfinished())
                .put("failed", flow.failed())
                .put("cancelled", flow.cancelled())
                .put("createdAt", time(flow.createdAt()))
                .put("finishedAt", time(flow.finishedAt()));
    }

    private static String time(Instant time) {
        return time == null ? null : IsoTime.format(time);
    }
}
