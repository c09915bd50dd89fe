package dev.taskline.http;

import dev.taskline.admission.SubmissionJson;
import dev.taskline.config.TasklineConfig;
import dev.taskline.model.Insert;
import dev.taskline.model.TaskState;
import dev.taskline.model.TaskView;
import dev.taskline.model.problem.ApiException;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.service.DurableService;
import dev.taskline.service.TaskService;
import dev.taskline.service.Views.TaskFilter;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;
import io.vertx.ext.web.handler.BodyHandler;
import java.util.Set;
import java.util.UUID;

/** {@code /api/tasks}: submit, read, list, cancel and retry tasks. */
final class TaskRoutes implements Routes {

    /** The states a list may be filtered by, as its refusal names them. */
    private static final String STATES = java.util.Arrays.stream(TaskState.values())
            .map(TaskState::sql)
            .collect(java.util.stream.Collectors.joining(", "));

    private static final Set<String> BULK_RETRY_FIELDS = Set.of("queue", "type", "limit");

    private final TaskService service;
    private final DurableService durable;
    private final BodyHandler body;
    private final Submissions submissions;
    private final EventLinks links;

    private final TasklineConfig.Http bounds;

    TaskRoutes(
            TaskService service,
            DurableService durable,
            BodyHandler body,
            Submissions submissions,
            EventLinks links,
            TasklineConfig.Http bounds) {
        this.bounds = bounds;
        this.durable = durable;
        this.links = links;
        this.service = service;
        this.body = body;
        this.submissions = submissions;
    }

    @Override
    public void mount(Router router) {
        router.post("/api/tasks").handler(body).handler(this::submit);
        router.post("/api/tasks/retry").handler(body).handler(this::retryFailed);
        router.post("/api/tasks/:id/cancel").handler(body).handler(this::cancel);
        router.post("/api/tasks/:id/retry").handler(this::retry);
        router.get("/api/tasks").handler(this::list);
        router.get("/api/tasks/:id").handler(this::get);
        router.get("/api/tasks/:id/steps").handler(this::steps);
        router.get("/api/tasks/:id/signals").handler(this::signals);
        router.get("/api/tasks/:id/history").handler(this::history);
    }

    private void submit(RoutingContext ctx) {
        long arrived = System.nanoTime();
        JsonObject json = Requests.jsonBody(ctx);
        submissions.answer(
                ctx,
                arrived,
                service.submit(
                        Requests.caller(ctx),
                        SubmissionJson.task(json),
                        Submissions.idempotencyKey(ctx),
                        Submissions.tenant(ctx)),
                admitted -> "/api/tasks/" + admitted.tasks().get(0).task().id(),
                admitted -> {
                    Insert insert = admitted.tasks().get(0);
                    return ApiJson.accepted(
                            insert, links.task(insert.task().id(), insert.task().tenant()));
                });
    }

    /**
     * The task with the first page of its steps, signals and history; {@code stepsNext}, {@code
     * signalsNext} and {@code historyNext} read the rest.
     */
    private void get(RoutingContext ctx) {
        service.task(Requests.caller(ctx), Requests.idParam(ctx))
                .compose(task -> durable.view(task.id(), bounds.maxPageBytes()).map(steps -> {
                    JsonObject json = ApiJson.task(task)
                            .put("eventsUrl", links.task(task.id(), task.tenant()))
                            .mergeIn(ApiJson.durable(task.id(), steps));
                    if (task.history() != null && task.history().size() >= TaskView.HISTORY_SHOWN) {
                        json.put(
                                "historyNext",
                                "/api/tasks/" + task.id() + "/history?after="
                                        + task.history()
                                                .get(task.history().size() - 1)
                                                .eventId());
                    }
                    return json;
                }))
                .onSuccess(json -> Requests.json(ctx, 200, json))
                .onFailure(ctx::fail);
    }

    /** {@code GET /api/tasks/{id}/steps}: a page of its steps done, {@code {items, next}}; after: a position. */
    private void steps(RoutingContext ctx) {
        Long after = position(ctx);
        int limit = Pages.limit(ctx);
        service.task(Requests.caller(ctx), Requests.idParam(ctx))
                .compose(task -> durable.steps(task.id(), after, limit, bounds.maxPageBytes()))
                .onSuccess(page -> Requests.json(
                        ctx,
                        200,
                        new JsonObject()
                                .put("items", ApiJson.steps(page.items()))
                                .put("next", page.next())))
                .onFailure(ctx::fail);
    }

    /** {@code GET /api/tasks/{id}/signals}: a page of the signals no wait has taken yet, {@code {items, next}}. */
    private void signals(RoutingContext ctx) {
        Long after = position(ctx);
        int limit = Pages.limit(ctx);
        service.task(Requests.caller(ctx), Requests.idParam(ctx))
                .compose(task -> durable.signals(task.id(), after, limit, bounds.maxPageBytes()))
                .onSuccess(page -> Requests.json(
                        ctx,
                        200,
                        new JsonObject()
                                .put("items", ApiJson.signals(page.items()))
                                .put("next", page.next())))
                .onFailure(ctx::fail);
    }

    /** {@code GET /api/tasks/{id}/history}: a page of its transitions, {@code {items, next}}; after: an event id. */
    private void history(RoutingContext ctx) {
        Long after = position(ctx);
        int limit = Pages.limit(ctx);
        service.history(Requests.caller(ctx), Requests.idParam(ctx), after, limit)
                .onSuccess(events -> Requests.json(
                        ctx,
                        200,
                        new JsonObject()
                                .put("items", ApiJson.history(events))
                                .put(
                                        "next",
                                        events.size() < limit
                                                ? null
                                                : String.valueOf(events.get(events.size() - 1)
                                                        .eventId()))))
                .onFailure(ctx::fail);
    }

    /** {@code after}: the position the previous page ended with (null: the first page); else 400. */
    private static Long position(RoutingContext ctx) {
        String text = Requests.query(ctx, "after");
        if (text == null) {
            return null;
        }
        try {
            long after = Long.parseLong(text);
            if (after >= 0) {
                return after;
            }
        } catch (NumberFormatException e) {
            // answered below
        }
        throw ApiException.badRequest("after must be the next the previous page gave");
    }

    private void list(RoutingContext ctx) {
        String stateText = Requests.query(ctx, "state");
        TaskState state = stateText == null ? null : TaskState.parse(stateText);
        if (stateText != null && state == null) {
            throw ApiException.badRequest("state must be one of " + STATES);
        }
        UUID afterId = Pages.after(ctx, "a task id");
        int limit = Pages.limit(ctx);
        TaskFilter filter =
                new TaskFilter(state, Requests.query(ctx, "queue"), Requests.query(ctx, "type"), afterId, limit);
        service.list(Requests.caller(ctx), filter)
                .onSuccess(page -> Requests.json(
                        ctx,
                        200,
                        new JsonObject()
                                .put("tasks", ApiJson.tasks(page.tasks()))
                                .put(
                                        "next",
                                        page.next() == null ? null : page.next().toString())))
                .onFailure(ctx::fail);
    }

    private void cancel(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        boolean compensate = false;
        if (!ctx.body().isEmpty()) {
            JsonObject json = Requests.jsonBody(ctx);
            InvalidTaskException.unlessKnown(json, Set.of("compensate"), "");
            Object value = json.getValue("compensate");
            if (value != null && !(value instanceof Boolean)) {
                throw new InvalidTaskException("compensate must be true or false");
            }
            compensate = Boolean.TRUE.equals(value);
        }
        if (compensate) {
            // A task that ran no step has nothing to undo: cancelled as without compensation.
            durable.compensate(Requests.caller(ctx), id)
                    .onSuccess(will -> {
                        if (will) {
                            Requests.json(
                                    ctx,
                                    202,
                                    new JsonObject().put("id", id.toString()).put("state", "compensating"));
                        } else {
                            cancelled(ctx, id);
                        }
                    })
                    .onFailure(ctx::fail);
            return;
        }
        cancelled(ctx, id);
    }

    private void cancelled(RoutingContext ctx, UUID id) {
        service.cancel(Requests.caller(ctx), id)
                .onSuccess(done -> Requests.json(
                        ctx,
                        202,
                        new JsonObject()
                                .put("id", id.toString())
                                .put("state", done.stopping() ? "cancelling" : TaskState.CANCELLED.sql())))
                .onFailure(ctx::fail);
    }

    private void retry(RoutingContext ctx) {
        UUID id = Requests.idParam(ctx);
        service.retry(Requests.caller(ctx), id)
                .onSuccess(v -> Requests.json(
                        ctx, 202, new JsonObject().put("id", id.toString()).put("state", TaskState.PENDING.sql())))
                .onFailure(ctx::fail);
    }

    private void retryFailed(RoutingContext ctx) {
        JsonObject json = Requests.jsonBody(ctx);
        InvalidTaskException.unlessKnown(json, BULK_RETRY_FIELDS, "");
        Object queue = json.getValue("queue", TasklineConfig.DEFAULT_QUEUE);
        Object type = json.getValue("type");
        Object limit = json.getValue("limit", 100);
        if (!(queue instanceof String) || (type != null && !(type instanceof String)) || !(limit instanceof Integer)) {
            throw new InvalidTaskException("queue and type must be strings, limit an integer");
        }
        service.retryFailed(Requests.caller(ctx), (String) queue, (String) type, (Integer) limit)
                .onSuccess(moved -> {
                    JsonArray ids = new JsonArray();
                    moved.forEach(id -> ids.add(id.toString()));
                    Requests.json(
                            ctx,
                            202,
                            new JsonObject().put("retried", moved.size()).put("ids", ids));
                })
                .onFailure(ctx::fail);
    }
}
