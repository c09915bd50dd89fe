package dev.taskline.http;

import dev.taskline.model.TaskState;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.ShuttingDownException;
import dev.taskline.service.Caller;
import dev.taskline.service.Views.ItemResult;
import dev.taskline.service.Views.LeaseWrite;
import dev.taskline.service.WorkService;
import dev.taskline.worker.Ended;
import dev.taskline.worker.RemoteWorkers;
import io.vertx.core.Future;
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
import java.util.stream.Collectors;
import java.util.stream.Stream;

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
        router.post("/api/queues/:queue/work").handler(body).handler(this::work);
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

    /**
     * A worker's loop in one round trip: what it finished (completions and failures, each answered
     * on its own) and a claim of the next tasks, made once the writes have ended and waiting as a
     * claim waits. A node that is draining answers the writes with no tasks.
     */
    private void work(RoutingContext ctx) {
        JsonObject json = Requests.jsonBody(ctx);
        known(json, "worker", "max", "waitMs", "types", "complete", "fail");
        String worker = text(json, "worker");
        int max = integer(json, "max", 1);
        long waitMs = integer(json, "waitMs", 0);
        Set<String> types = Requests.strings(json, "types", "types must be an array of task types");
        List<LeaseWrite> completions =
                json.containsKey("complete") ? leaseWrites(json.getValue("complete"), "complete", true) : List.of();
        List<WorkService.Failure> failures = json.containsKey("fail") ? failures(json.getValue("fail")) : List.of();
        Caller caller = Requests.caller(ctx);
        String queue = Requests.path(ctx, "queue");
        // A claim that would be refused is refused before anything is written: bad input changes nothing.
        if (max < 0 || max > WorkService.MAX_CLAIM) {
            throw new InvalidTaskException("max must be from 0 to " + WorkService.MAX_CLAIM);
        }
        // max 0 hands in what was done and claims nothing: a batch that outlives a third of its lease.
        service.checkClaim(caller, queue, worker, Math.max(max, 1), types, waitMs)
                .onSuccess(v -> work(ctx, caller, queue, worker, max, types, waitMs, completions, failures))
                .onFailure(ctx::fail);
    }

    private void work(
            RoutingContext ctx,
            Caller caller,
            String queue,
            String worker,
            int max,
            Set<String> types,
            long waitMs,
            List<LeaseWrite> completions,
            List<WorkService.Failure> failures) {
        Future<List<ItemResult<TaskState>>> completed = completions.isEmpty()
                ? Future.succeededFuture(List.of())
                : service.completeAll(caller, queue, completions);
        Future<List<ItemResult<Ended>>> failed = service.failAll(caller, queue, failures);
        Promise<Void> gone = Promise.promise();
        ctx.response().closeHandler(v -> gone.tryComplete());
        boolean wrote = !completions.isEmpty() || !failures.isEmpty();
        // The claim starts once the writes have ended: the slots they free are the claim's to take.
        Future<List<RemoteWorkers.Claimed>> claimed = Future.join(completed, failed)
                .transform(written -> written.failed()
                        ? Future.failedFuture(written.cause())
                        : max == 0
                                ? Future.succeededFuture(List.<RemoteWorkers.Claimed>of())
                                : service.claim(caller, queue, worker, max, types, waitMs, gone.future()))
                .recover(e -> wrote && e instanceof ShuttingDownException
                        ? Future.succeededFuture(List.of())
                        : Future.failedFuture(e));
        Future.all(completed, failed, claimed).onComplete(all -> {
            if (claimed.succeeded()
                    && (completed.failed() || failed.failed() || ctx.response().closed())) {
                service.handBack(caller, claimed.result());
            }
            if (ctx.response().closed()) {
                return;
            }
            Throwable cause = completed.failed() ? completed.cause() : failed.failed() ? failed.cause() : all.cause();
            if (cause != null) {
                ctx.fail(cause);
                return;
            }
            String before = "\"completed\":"
                    + itemList(ctx, completed.result(), state -> new JsonObject().put("state", state.sql()))
                            .encode()
                    + ",\"failed\":"
                    + itemList(ctx, failed.result(), outcome -> ApiJson.failOutcome(null, outcome))
                            .encode()
                    + ",";
            ctx.response().putHeader("Content-Type", "application/json").end(ApiJson.claimed(claimed.result(), before));
        });
    }

    private static List<WorkService.Failure> failures(Object value) {
        if (!(value instanceof JsonArray array)) {
            throw new InvalidTaskException(
                    "fail must be an array of {id, lease, error, retry?, retryAfterMs?} or {id, lease, snoozeMs | release}");
        }
        List<WorkService.Failure> failures = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            String at = "fail[" + i + "].";
            if (!(array.getValue(i) instanceof JsonObject item)) {
                throw new InvalidTaskException("fail[" + i + "] must be an object");
            }
            InvalidTaskException.unlessKnown(item, FAIL_ITEM_FIELDS, at);
            UUID id = Requests.uuid(item.getValue("id") instanceof String s ? s : null);
            if (id == null) {
                throw new InvalidTaskException(at + "id must be a task id");
            }
            failures.add(new WorkService.Failure(id, ending(item, at)));
        }
        return failures;
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
        InvalidTaskException.unlessKnown(json, FAIL_FIELDS, "");
        service.fail(Requests.caller(ctx), id, ending(json, ""))
                .onSuccess(outcome -> Requests.json(ctx, 200, ApiJson.failOutcome(id, outcome)))
                .onFailure(ctx::fail);
    }

    private static final Set<String> FAIL_FIELDS =
            Set.of("lease", "error", "retry", "retryAfterMs", "snoozeMs", "release");
    private static final Set<String> FAIL_ITEM_FIELDS =
            Stream.concat(FAIL_FIELDS.stream(), Stream.of("id")).collect(Collectors.toUnmodifiableSet());

    /**
     * A failure ({@code error}, {@code retry}, {@code retryAfterMs}), or a task put back without
     * spending the attempt ({@code snoozeMs}, or {@code release: true}): one or the other.
     */
    private static WorkService.Ending ending(JsonObject json, String at) {
        String lease = text(json, "lease", at);
        Object retry = json.getValue("retry", true);
        if (!(retry instanceof Boolean)) {
            throw new InvalidTaskException(at + "retry must be true or false");
        }
        Object release = json.getValue("release", false);
        if (!(release instanceof Boolean)) {
            throw new InvalidTaskException(at + "release must be true or false");
        }
        Long after = millis(json, "retryAfterMs", at);
        Long snooze = millis(json, "snoozeMs", at);
        boolean putsBack = (Boolean) release || snooze != null;
        if (putsBack && (json.containsKey("retry") || after != null || ((Boolean) release && snooze != null))) {
            throw new InvalidTaskException(
                    at + "snoozeMs and release put the task back: neither goes with retry, retryAfterMs or the other");
        }
        String error = putsBack && !json.containsKey("error") ? null : text(json, "error", at);
        return new WorkService.Ending(lease, error, (Boolean) retry, after, snooze, (Boolean) release);
    }

    private static Long millis(JsonObject json, String field, String at) {
        Object value = json.getValue(field);
        if (value != null && !(value instanceof Integer || value instanceof Long)) {
            throw new InvalidTaskException(at + field + " must be an integer");
        }
        return value == null ? null : ((Number) value).longValue();
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
        return new JsonObject().put("tasks", itemList(ctx, results, ok));
    }

    private static <T> JsonArray itemList(RoutingContext ctx, List<ItemResult<T>> results, Function<T, JsonObject> ok) {
        JsonArray list = new JsonArray();
        for (ItemResult<T> result : results) {
            JsonObject item = result.failure() == null
                    ? ok.apply(result.outcome()).put("status", 200)
                    : Problems.describe(ctx, result.failure());
            list.add(new JsonObject().put("id", result.id().toString()).mergeIn(item));
        }
        return list;
    }

    private static List<LeaseWrite> leaseWrites(RoutingContext ctx, boolean results) {
        JsonObject json = Requests.jsonBody(ctx);
        known(json, "tasks");
        return leaseWrites(json.getValue("tasks"), "tasks", results);
    }

    private static List<LeaseWrite> leaseWrites(Object tasks, String field, boolean results) {
        if (!(tasks instanceof JsonArray array)) {
            throw new InvalidTaskException(
                    field + " must be an array of {id, lease, " + (results ? "result" : "progress") + "}");
        }
        List<LeaseWrite> writes = new ArrayList<>(array.size());
        for (int i = 0; i < array.size(); i++) {
            String at = field + "[" + i + "].";
            if (!(array.getValue(i) instanceof JsonObject item)) {
                throw new InvalidTaskException(field + "[" + i + "] must be an object");
            }
            InvalidTaskException.unlessKnown(
                    item, results ? Set.of("id", "lease", "result", "spawn") : Set.of("id", "lease", "progress"), at);
            UUID id = Requests.uuid(item.getValue("id") instanceof String s ? s : null);
            if (id == null) {
                throw new InvalidTaskException(at + "id must be a task id");
            }
            writes.add(leaseWrite(item, id, results, at));
        }
        return writes;
    }

    private static LeaseWrite leaseWrite(JsonObject json, UUID id, boolean withResult) {
        return leaseWrite(json, id, withResult, "");
    }

    private static LeaseWrite leaseWrite(JsonObject json, UUID id, boolean withResult, String at) {
        String lease = text(json, "lease", at);
        if (withResult) {
            Object result = json.getValue("result");
            if (result != null && !(result instanceof JsonObject)) {
                throw new InvalidTaskException(at + "result must be a JSON object");
            }
            Object spawn = json.getValue("spawn");
            if (spawn != null && !(spawn instanceof JsonArray)) {
                throw new InvalidTaskException(at + "spawn must be an array of tasks");
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
            throw new InvalidTaskException(at + "progress must be {\"percent\": 0 to 100, \"message\"?: text}");
        }
        return new LeaseWrite(id, lease, null, percent, p.getString("message"), null);
    }

    private static void known(JsonObject json, String... fields) {
        InvalidTaskException.unlessKnown(json, Set.of(fields), "");
    }

    private static String text(JsonObject json, String field) {
        return text(json, field, "");
    }

    private static String text(JsonObject json, String field, String at) {
        Object value = json.getValue(field);
        if (!(value instanceof String s)) {
            throw new InvalidTaskException(at + field + " must be a string");
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
