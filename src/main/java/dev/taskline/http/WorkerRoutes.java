package dev.taskline.http;

import dev.taskline.model.TaskState;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.service.Views.ItemResult;
import dev.taskline.service.Views.LeaseWrite;
import dev.taskline.service.WorkService;
import io.vertx.core.Promise;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.UUID;
import java.util.function.Function;

/**
 * Workers over HTTP: claim tasks of a remote queue (a long poll), then heartbeat, complete or fail
 * each with the lease token the claim gave; batch forms for throughput; the workers seen.
 */
final class WorkerRoutes implements Routes {

    private final WorkService service;
    private final BodyHandler body;

    WorkerRoutes(WorkService service, BodyHandler body) {
        this.service = service;
        this.body = body;
    }

    @Override
    public void mount(Router router) {
        router.post("/api/queues/:queue/claim").handler(body).handler(this::claim);
        router.post("/api/queues/:queue/complete").handler(body).handler(this::completeAll);
        router.post("/api/queues/:queue/heartbeat").handler(body).handler(this::heartbeatAll);
        router.post("/api/tasks/:id/heartbeat").handler(body).handler(this::heartbeat);
        router.post("/api/tasks/:id/complete").handler(body).handler(this::complete);
        router.post("/api/tasks/:id/fail").handler(body).handler(this::fail);
        router.post("/api/tasks/:id/steps/:name").handler(body).handler(this::step);
        router.get("/api/workers").handler(this::workers);
    }

    private void claim(RoutingContext ctx) {
        JsonObject json = Requests.jsonBody(ctx);
        known(json, "worker", "max", "waitMs", "types");
        String worker = text(json, "worker");
        int max = integer(json, "max", 1);
        long waitMs = integer(json, "waitMs", 0);
        // Left out: the claim takes any type.
        Set<String> types = Requests.strings(json, "types", "types must be an array of task types");
        // A client that goes away while its claim waits must not have tasks leased to it.
        Promise<Void> gone = Promise.promise();
        ctx.response().closeHandler(v -> gone.tryComplete());
        service.claim(Requests.caller(ctx), Requests.path(ctx, "queue"), worker, max, types, waitMs, gone.future())
                .onSuccess(claimed -> {
                    if (ctx.response().closed()) {
                        service.handBack(Requests.caller(ctx), claimed);
                        return;
                    }
                    ctx.response().putHeader("Content-Type", "application/json").end(ApiJson.claimed(claimed));
                })
                .onFailure(ctx::fail);
    }

    private void heartbeat(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        JsonObject json = Requests.jsonBody(ctx);
        known(json, "lease", "progress");
        LeaseWrite write = leaseWrite(json, id, false);
        service.heartbeat(Requests.caller(ctx), id, write.lease(), write.percent(), write.message())
                .onSuccess(beat -> Requests.json(ctx, 200, ApiJson.beat(beat)))
                .onFailure(ctx::fail);
    }

    private void complete(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        JsonObject json = Requests.jsonBody(ctx);
        known(json, "lease", "result", "spawn", "suspend");
        if (json.containsKey("suspend")) {
            if (json.containsKey("result") || json.containsKey("spawn")) {
                throw new InvalidTaskException("an attempt ends with a result or a suspend, not both");
            }
            dev.taskline.model.Suspend suspend = dev.taskline.model.SuspendJson.parse(json.getValue("suspend"));
            service.suspend(Requests.caller(ctx), id, text(json, "lease"), suspend)
                    .onSuccess(state -> Requests.json(
                            ctx,
                            200,
                            new JsonObject()
                                    .put("id", id.toString())
                                    .put("state", state.sql())
                                    .put("suspended", state == TaskState.PENDING)))
                    .onFailure(ctx::fail);
            return;
        }
        LeaseWrite write = leaseWrite(json, id, true);
        service.complete(Requests.caller(ctx), id, write.lease(), write.result(), write.spawn())
                .onSuccess(state -> Requests.json(
                        ctx, 200, new JsonObject().put("id", id.toString()).put("state", state.sql())))
                .onFailure(ctx::fail);
    }

    /** A durable step of a remote attempt: 200 with the result kept, the first one written for its name. */
    private void step(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        String name = ctx.pathParam("name");
        JsonObject json = Requests.jsonBody(ctx);
        known(json, "lease", "result");
        if (!json.containsKey("result")) {
            throw new InvalidTaskException("result is required (null is a result)");
        }
        service.step(Requests.caller(ctx), id, text(json, "lease"), name, json.getValue("result"))
                .onSuccess(kept -> ctx.response()
                        .setStatusCode(200)
                        .putHeader("Content-Type", "application/json")
                        .end("{\"name\":" + io.vertx.core.json.Json.encode(name) + ",\"result\":" + kept.resultJson()
                                + ",\"first\":" + kept.first() + "}"))
                .onFailure(ctx::fail);
    }

    private void fail(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        JsonObject json = Requests.jsonBody(ctx);
        known(json, "lease", "error", "retry", "retryAfterMs");
        String lease = text(json, "lease");
        String error = text(json, "error");
        Object retry = json.getValue("retry", true);
        if (!(retry instanceof Boolean)) {
            throw new InvalidTaskException("retry must be true or false");
        }
        Object after = json.getValue("retryAfterMs");
        if (after != null && !(after instanceof Integer || after instanceof Long)) {
            throw new InvalidTaskException("retryAfterMs must be an integer");
        }
        service.fail(
                        Requests.caller(ctx),
                        id,
                        lease,
                        error,
                        (Boolean) retry,
                        after == null ? null : ((Number) after).longValue())
                .onSuccess(outcome -> Requests.json(ctx, 200, ApiJson.failOutcome(id, outcome)))
                .onFailure(ctx::fail);
    }

    private void completeAll(RoutingContext ctx) {
        List<LeaseWrite> writes = leaseWrites(ctx, true);
        service.completeAll(Requests.caller(ctx), Requests.path(ctx, "queue"), writes)
                .onSuccess(results -> Requests.json(
                        ctx, 200, items(ctx, results, state -> new JsonObject().put("state", state.sql()))))
                .onFailure(ctx::fail);
    }

    private void heartbeatAll(RoutingContext ctx) {
        List<LeaseWrite> writes = leaseWrites(ctx, false);
        service.heartbeatAll(Requests.caller(ctx), Requests.path(ctx, "queue"), writes)
                .onSuccess(results -> Requests.json(ctx, 200, items(ctx, results, ApiJson::beat)))
                .onFailure(ctx::fail);
    }

    private void workers(RoutingContext ctx) {
        service.workers(Requests.caller(ctx))
                .onSuccess(list -> {
                    JsonArray workers = new JsonArray();
                    list.forEach(w -> workers.add(ApiJson.worker(w)));
                    Requests.json(ctx, 200, new JsonObject().put("workers", workers));
                })
                .onFailure(ctx::fail);
    }

    /** Each item's answer: its own status, and what it came to or the problem that refused it. */
    private static <T> JsonObject items(RoutingContext ctx, List<ItemResult<T>> results, Function<T, JsonObject> ok) {
        JsonArray list = new JsonArray();
        for (ItemResult<T> result : results) {
            JsonObject item = result.failure() == null
                    ? ok.apply(result.outcome()).put("status", 200)
                    : Problems.describe(ctx, result.failure());
            list.add(new JsonObject().put("id", result.id().toString()).mergeIn(item));
        }
        return new JsonObject().put("tasks", list);
    }

    private static List<LeaseWrite> leaseWrites(RoutingContext ctx, boolean results) {
        JsonObject json = Requests.jsonBody(ctx);
        known(json, "tasks");
        Object tasks = json.getValue("tasks");
        if (!(tasks instanceof JsonArray array)) {
            throw new InvalidTaskException(
                    "tasks must be an array of {id, lease, " + (results ? "result" : "progress") + "}");
        }
        List<LeaseWrite> writes = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            if (!(array.getValue(i) instanceof JsonObject item)) {
                throw new InvalidTaskException("tasks[" + i + "] must be an object");
            }
            Requests.knownFields(
                    item,
                    results ? Set.of("id", "lease", "result", "spawn") : Set.of("id", "lease", "progress"),
                    "tasks[" + i + "].");
            UUID id = Requests.uuid(item.getValue("id") instanceof String s ? s : null);
            if (id == null) {
                throw new InvalidTaskException("tasks[" + i + "].id must be a task id");
            }
            writes.add(leaseWrite(item, id, results));
        }
        return writes;
    }

    private static LeaseWrite leaseWrite(JsonObject json, UUID id, boolean withResult) {
        String lease = text(json, "lease");
        if (withResult) {
            Object result = json.getValue("result");
            if (result != null && !(result instanceof JsonObject)) {
                throw new InvalidTaskException("result must be a JSON object");
            }
            Object spawn = json.getValue("spawn");
            if (spawn != null && !(spawn instanceof JsonArray)) {
                throw new InvalidTaskException("spawn must be an array of tasks");
            }
            return new LeaseWrite(id, lease, (JsonObject) result, null, null, (JsonArray) spawn);
        }
        Object progress = json.getValue("progress");
        if (progress == null) {
            return new LeaseWrite(id, lease, null, null, null, null);
        }
        if (!(progress instanceof JsonObject p)
                || !(p.getValue("percent") instanceof Integer percent)
                || (p.getValue("message") != null && !(p.getValue("message") instanceof String))) {
            throw new InvalidTaskException("progress must be {\"percent\": 0 to 100, \"message\"?: text}");
        }
        return new LeaseWrite(id, lease, null, percent, p.getString("message"), null);
    }

    private static void known(JsonObject json, String... fields) {
        Requests.knownFields(json, Set.of(fields), "");
    }

    private static String text(JsonObject json, String field) {
        Object value = json.getValue(field);
        if (!(value instanceof String s)) {
            throw new InvalidTaskException(field + " must be a string");
        }
        return s;
    }

    private static int integer(JsonObject json, String field, int fallback) {
        Object value = json.getValue(field);
        if (value == null) {
            return fallback;
        }
        if (!(value instanceof Integer i)) {
            throw new InvalidTaskException(field + " must be an integer");
        }
        return i;
    }
}
