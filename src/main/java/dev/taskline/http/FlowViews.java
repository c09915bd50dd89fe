package dev.taskline.http;

import dev.taskline.model.FlowAccepted;
import dev.taskline.model.FlowRecord;
import dev.taskline.model.FlowTaskView;
import dev.taskline.model.FlowView;
import dev.taskline.model.TaskState;
import dev.taskline.support.IsoTime;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.time.Instant;
import java.util.EnumMap;
import java.util.List;
import java.util.Map;

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

    static JsonObject flow(FlowView view, String eventsUrl) {
        Map<TaskState, Integer> counts = new EnumMap<>(TaskState.class);
        for (TaskState state : TaskState.values()) {
            counts.put(state, 0);
        }
        JsonArray tasks = new JsonArray();
        for (FlowTaskView task : view.tasks()) {
            counts.merge(task.state(), 1, Integer::sum);
            tasks.add(new JsonObject()
                    .put("key", task.key())
                    .put("id", task.id().toString())
                    .put("queue", task.queue())
                    .put("type", task.type())
                    .put("state", task.state().sql())
                    .put("join", task.join())
                    .put("dependsOn", new JsonArray(List.copyOf(task.dependsOn())))
                    .put("attempt", task.attempt())
                    .put("result", task.result())
                    .put("error", task.error()));
        }
        JsonObject byState = new JsonObject();
        counts.forEach((state, n) -> byState.put(state.sql(), n));
        return summary(view.flow())
                .put("counts", byState)
                .put("eventsUrl", eventsUrl)
                .put("tasks", tasks);
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
