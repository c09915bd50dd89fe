package dev.taskline.handler;

import dev.taskline.config.PushTarget;
import dev.taskline.model.StoredJson;
import dev.taskline.model.Suspend;
import dev.taskline.model.SuspendJson;
import dev.taskline.model.problem.InvalidTaskException;
import io.vertx.core.Future;
import io.vertx.core.MultiMap;
import io.vertx.core.Promise;
import io.vertx.core.Vertx;
import io.vertx.core.buffer.Buffer;
import io.vertx.core.http.HttpClient;
import io.vertx.core.http.HttpClientAgent;
import io.vertx.core.http.HttpClientOptions;
import io.vertx.core.http.HttpClientRequest;
import io.vertx.core.http.HttpClientResponse;
import io.vertx.core.http.HttpHeaders;
import io.vertx.core.http.HttpMethod;
import io.vertx.core.http.PoolOptions;
import io.vertx.core.http.RequestOptions;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import java.net.URI;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.ZonedDateTime;
import java.time.format.DateTimeFormatter;
import java.time.format.DateTimeParseException;

/**
 * Runs a push queue's tasks by POSTing each one to the queue's target, through a non-blocking
 * client. The answer decides: 2xx succeeds with its JSON body (any other body is kept as {@code
 * {"body": text}}); 429 or 503 with {@code Retry-After} (seconds or a date) runs the task again after that delay
 * without spending an attempt, as the target asks; 408, other 5xx, a refused connection or the
 * timeout fail the attempt, retried with the queue's backoff; any other 4xx, and a redirect (never
 * followed), fail the task at once with the body's text. A flow task's answer may spawn tasks into
 * its flow ({@link #spawned}), and any task's may write durable steps or suspend ({@link #durable}).
 * An answer is read up to {@code maxAnswerBytes} (http.bodyLimitBytes, the bound of a request's
 * body): a 2xx past it fails the attempt as a target error, retried as any; another status is
 * decided on what was read. A 2xx answer is checked as a remote worker's complete is (no NUL nor
 * lone surrogate in any name or string, step names, a suspend's fields and range, spawn's shape)
 * before any of it is written: one that breaks a rule fails the task at once, naming the rule, as
 * the same target would answer the same again.
 * The lease is renewed while the call is
 * open like any attempt's, and an answer that comes after the lease was lost is fenced.
 */
public final class PushHandler implements TaskHandler {

    /** The longest name of a step, as the API takes it. */
    static final int MAX_STEP_NAME = 200;
    /** The most of an error body kept on the task. */
    static final int MAX_ERROR_BODY = 2_000;
    /** A Retry-After past this is taken as this: a target must not park a task for a year. */
    static final long MAX_RETRY_AFTER_SECONDS = 24 * 3600;

    private static final CharSequence JSON = HttpHeaders.createOptimized("application/json");
    private static final CharSequence USER_AGENT = HttpHeaders.createOptimized("Taskline");
    private static final CharSequence TASK_ID = HttpHeaders.createOptimized("Taskline-Task-Id");
    private static final CharSequence ATTEMPT = HttpHeaders.createOptimized("Taskline-Attempt");
    private static final CharSequence LEASE_VERSION = HttpHeaders.createOptimized("Taskline-Lease-Version");
    private static final CharSequence IDEMPOTENCY_KEY = HttpHeaders.createOptimized("Idempotency-Key");

    private final HttpClient client;
    private final PushTarget target;
    private final Clock clock;
    // The URL taken apart once: parsing it again for every call was a visible part of a call's cost.
    private final String host;
    private final int port;
    private final String requestUri;
    private final boolean tls;
    private final long maxAnswerBytes;

    /**
     * A handler for {@code target} with a pool of its own: as many keep-alive connections as the
     * queue runs calls at once ({@code connections}). {@link #close} it with its worker.
     *
     * @param maxAnswerBytes the most of an answer's body read
     */
    public static PushHandler open(Vertx vertx, PushTarget target, int connections, Clock clock, long maxAnswerBytes) {
        HttpClientAgent client = vertx.createHttpClient(
                new HttpClientOptions().setKeepAlive(true), new PoolOptions().setHttp1MaxSize(connections));
        return new PushHandler(client, target, clock, maxAnswerBytes);
    }

    /**
     * @param client         pooled keep-alive connections to the target, shared by the queue's calls
     * @param maxAnswerBytes the most of an answer's body read
     */
    public PushHandler(HttpClient client, PushTarget target, Clock clock, long maxAnswerBytes) {
        this.client = client;
        this.maxAnswerBytes = maxAnswerBytes;
        this.target = target;
        this.clock = clock;
        URI url = target.url();
        this.tls = "https".equals(url.getScheme());
        this.host = url.getHost();
        this.port = url.getPort() != -1 ? url.getPort() : tls ? 443 : 80;
        String path = url.getRawPath() == null || url.getRawPath().isEmpty() ? "/" : url.getRawPath();
        this.requestUri = url.getRawQuery() == null ? path : path + "?" + url.getRawQuery();
    }

    @Override
    public String type() {
        return "push";
    }

    /** Closes the connections to the target. */
    public Future<Void> close() {
        return client.close();
    }

    @Override
    public Future<JsonObject> run(TaskContext context) {
        return context.stepsDone().compose(steps -> call(context, steps));
    }

    private Future<JsonObject> call(TaskContext context, JsonObject steps) {
        JsonObject body = new JsonObject()
                .put("id", context.taskId().toString())
                .put("type", context.type())
                .put("payload", context.payload())
                .put("attempt", context.attempt());
        if (context.flowKey() != null) {
            body.put("flowKey", context.flowKey());
        }
        if (!steps.isEmpty()) {
            body.put("steps", steps);
        }
        if (context.cancelled()) {
            body.put("compensating", true);
        }
        if (context.parentCount() > 0) {
            try {
                body.put("parents", new JsonObject(new java.util.LinkedHashMap<>(context.parents())))
                        .put("parentStates", new JsonObject(new java.util.LinkedHashMap<>(context.parentStates())));
            } catch (IllegalStateException heavy) {
                // Past flows.maxParentBytes the target is told where to read them, as a remote worker's claim is.
                body.put(
                        "parentsRef",
                        new JsonObject()
                                .put("count", context.parentCount())
                                .put("url", "/api/tasks/" + context.taskId() + "/parents"));
            }
        }
        MultiMap headers = HttpHeaders.headers()
                .add(HttpHeaders.CONTENT_TYPE, JSON)
                .add(HttpHeaders.USER_AGENT, USER_AGENT)
                .add(TASK_ID, context.taskId().toString())
                .add(ATTEMPT, Integer.toString(context.attempt()))
                .add(LEASE_VERSION, Long.toString(context.leaseVersion()))
                .add(IDEMPOTENCY_KEY, context.taskId().toString());
        target.headers().forEach(headers::add);
        // The core client, not the web client: a call is a request and an answer, and the web
        // client's request objects and codecs were a visible part of a pushed task's cost.
        RequestOptions request = new RequestOptions()
                .setMethod(HttpMethod.POST)
                .setHost(host)
                .setPort(port)
                .setURI(requestUri)
                .setSsl(tls)
                .setFollowRedirects(false)
                .setTimeout(target.timeoutMs())
                .setHeaders(headers);
        return client.request(request)
                .compose(call -> call.send(body.toBuffer()).compose(answer -> read(call, answer)))
                .recover(e -> Future.failedFuture(
                        e instanceof AnswerTooLarge
                                ? e
                                : new IllegalStateException(
                                        "the push target did not answer: "
                                                + (e.getMessage() == null
                                                        ? e.getClass().getSimpleName()
                                                        : e.getMessage()),
                                        e)))
                .compose(answer -> outcome(answer, clock.instant()))
                .compose(result -> checked(context, result, clock.instant()))
                .compose(result -> durable(context, result))
                .compose(result -> spawned(context, result));
    }

    /** An answer's body past the bound: a target error, retried as any. */
    static final class AnswerTooLarge extends IllegalStateException {
        AnswerTooLarge(long bound) {
            super("the push target's answer is larger than the " + bound
                    + " bytes an answer may have (http.bodyLimitBytes)");
        }
    }

    /**
     * The answer, its body read up to {@link #maxAnswerBytes}: never more is held. A 2xx past it
     * fails; another status keeps what was read, as only its start is kept on the task. Either way
     * the connection is reset rather than drained.
     */
    private Future<Answer> read(HttpClientRequest call, HttpClientResponse answer) {
        int status = answer.statusCode();
        boolean success = status >= 200 && status < 300;
        String declared = answer.getHeader(HttpHeaders.CONTENT_LENGTH);
        Promise<Answer> read = Promise.promise();
        // Before any reset: what the answer then reports (the reset itself) is taken here, not logged.
        answer.exceptionHandler(read::tryFail);
        if (success && declared != null && declared.matches("\\d{1,18}") && Long.parseLong(declared) > maxAnswerBytes) {
            read.tryFail(new AnswerTooLarge(maxAnswerBytes));
            call.reset();
            return read.future();
        }
        Buffer body = Buffer.buffer();
        Runnable done = () -> read.tryComplete(new Answer(
                status,
                body.toString(),
                answer.getHeader(HttpHeaders.RETRY_AFTER),
                answer.getHeader(HttpHeaders.LOCATION)));
        answer.handler(chunk -> {
            if (read.future().isComplete()) {
                return;
            }
            if (body.length() + (long) chunk.length() > maxAnswerBytes) {
                if (success) {
                    read.tryFail(new AnswerTooLarge(maxAnswerBytes));
                } else {
                    body.appendBuffer(chunk, 0, (int) (maxAnswerBytes - body.length()));
                    done.run();
                }
                call.reset();
                return;
            }
            body.appendBuffer(chunk);
        });
        answer.endHandler(v -> done.run());
        return read.future();
    }

    /**
     * The result of a 2xx answer, when every part of it is what the API takes from a remote worker:
     * no name or string the journal cannot keep (see {@link StoredJson}), steps of names it takes, a
     * suspend it reads (its end within range: see {@link dev.taskline.model.Instants}), spawn of
     * tasks. Else the task fails for good with the reason, before anything of it is written.
     */
    static Future<JsonObject> checked(TaskContext context, JsonObject result, Instant now) {
        String flaw = StoredJson.flaw(result, "the answer");
        if (flaw != null) {
            return Future.failedFuture(new PermanentTaskException("the push target's " + flaw));
        }
        Object steps = result.getValue("steps");
        if (steps != null && !(steps instanceof JsonObject)) {
            return Future.failedFuture(new PermanentTaskException("the push target's steps must be an object"));
        }
        if (steps != null) {
            for (String name : ((JsonObject) steps).fieldNames()) {
                if (name.isEmpty() || name.length() > MAX_STEP_NAME) {
                    return Future.failedFuture(new PermanentTaskException("the push target's steps: a step's name must"
                            + " be 1 to " + MAX_STEP_NAME + " characters, got " + name.length()));
                }
            }
        }
        Object suspend = result.getValue("suspend");
        if (suspend != null) {
            try {
                SuspendJson.parse(suspend).at(now);
            } catch (InvalidTaskException e) {
                return Future.failedFuture(new PermanentTaskException("the push target's " + e.getMessage()));
            }
        }
        Object spawn = result.getValue("spawn");
        if (context.flowKey() != null
                && spawn != null
                && (!(spawn instanceof JsonArray tasks) || !tasks.stream().allMatch(JsonObject.class::isInstance))) {
            return Future.failedFuture(new PermanentTaskException("the push target's spawn must be an array of tasks"));
        }
        return Future.succeededFuture(result);
    }

    /**
     * A target's answer may carry durable steps, as a remote worker writes them: {@code "steps":
     * {name: result}} are journaled (a step already there keeps its first result), and {@code
     * "suspend": {...}} ends the attempt suspended, as a remote worker's complete does, instead of
     * succeeding. The fields are not kept in the result. The next call carries the steps done.
     */
    static Future<JsonObject> durable(TaskContext context, JsonObject result) {
        Object steps = result.getValue("steps");
        Object suspend = result.getValue("suspend");
        if (steps == null && suspend == null) {
            return Future.succeededFuture(result);
        }
        if (steps != null && !(steps instanceof JsonObject)) {
            return Future.failedFuture(new PermanentTaskException("the push target's steps must be an object"));
        }
        Suspend asked;
        try {
            asked = suspend == null ? null : SuspendJson.parse(suspend);
        } catch (InvalidTaskException e) {
            return Future.failedFuture(new PermanentTaskException("the push target's " + e.getMessage()));
        }
        Future<Void> written = Future.succeededFuture();
        if (steps != null) {
            for (java.util.Map.Entry<String, Object> step : (JsonObject) steps) {
                written =
                        written.compose(v -> context.step(step.getKey(), () -> Future.succeededFuture(step.getValue()))
                                .mapEmpty());
            }
        }
        JsonObject kept = result.copy();
        kept.remove("steps");
        kept.remove("suspend");
        if (asked == null) {
            return written.map(kept);
        }
        return written.compose(v -> wait(context, asked))
                .compose(
                        done -> Future.failedFuture(new PermanentTaskException("the push target asked to wait in step '"
                                + asked.step() + "', which is done: " + "its next call carries the step in steps")));
    }

    private static Future<?> wait(TaskContext context, Suspend asked) {
        Duration timeout = asked.until() != null || asked.afterMs() == null ? null : Duration.ofMillis(asked.afterMs());
        return switch (asked.kind()) {
            case SLEEP ->
                asked.until() != null
                        ? context.sleepUntil(asked.step(), asked.until())
                        : context.sleep(asked.step(), Duration.ofMillis(asked.afterMs()));
            case SIGNAL -> context.waitForSignal(asked.step(), asked.name(), timeout);
            case EVENT -> context.waitForEvent(asked.step(), asked.name(), asked.field(), asked.value(), timeout);
        };
    }

    /**
     * A flow task's target may answer {@code "spawn": [task, ...]} beside its result, as a remote
     * worker's complete does: those tasks join the flow with the success, and the field is not kept
     * in the result. For a task of no flow, the body is its result whatever fields it has.
     */
    static Future<JsonObject> spawned(TaskContext context, JsonObject result) {
        Object spawn = result.getValue("spawn");
        if (context.flowKey() == null || spawn == null) {
            return Future.succeededFuture(result);
        }
        if (!(spawn instanceof JsonArray tasks) || !tasks.stream().allMatch(JsonObject.class::isInstance)) {
            return Future.failedFuture(new PermanentTaskException("the push target's spawn must be an array of tasks"));
        }
        tasks.forEach(task -> context.spawn((JsonObject) task));
        JsonObject kept = result.copy();
        kept.remove("spawn");
        return Future.succeededFuture(kept);
    }

    /** A target's answer, as much of it as decides the task's outcome. */
    record Answer(int status, String body, String retryAfter, String location) {}

    static Future<JsonObject> outcome(Answer answer, Instant now) {
        int status = answer.status();
        String text = answer.body() == null ? "" : answer.body();
        if (status >= 200 && status < 300) {
            return Future.succeededFuture(result(text));
        }
        if (status == 429 || status == 503) {
            Long seconds = retryAfter(answer.retryAfter(), now);
            if (seconds != null) {
                return Future.failedFuture(
                        new SnoozeException(Duration.ofSeconds(Math.min(seconds, MAX_RETRY_AFTER_SECONDS))));
            }
            return Future.failedFuture(
                    new IllegalStateException("the push target answered " + status + ": " + cut(text)));
        }
        if (status == 408 || status >= 500) {
            return Future.failedFuture(
                    new IllegalStateException("the push target answered " + status + ": " + cut(text)));
        }
        if (status >= 300 && status < 400) {
            return Future.failedFuture(new PermanentTaskException("the push target redirected (" + status + " to "
                    + answer.location() + "); redirects are not followed"));
        }
        return Future.failedFuture(
                new PermanentTaskException("the push target refused the task with " + status + ": " + cut(text)));
    }

    private static JsonObject result(String text) {
        if (text.isBlank()) {
            return new JsonObject();
        }
        try {
            Object value = Json.decodeValue(text);
            if (value instanceof JsonObject object) {
                return object;
            }
        } catch (DecodeException e) {
            // kept as text below
        }
        return new JsonObject().put("body", text);
    }

    /**
     * Retry-After in seconds from {@code now}, given as a delay or as an HTTP date (RFC 9110
     * 10.2.3; a date past is no delay), or null when the header is absent or neither.
     */
    static Long retryAfter(String header, Instant now) {
        if (header == null) {
            return null;
        }
        String value = header.trim();
        if (value.matches("\\d{1,9}")) {
            return Long.parseLong(value);
        }
        try {
            Instant at = ZonedDateTime.parse(value, DateTimeFormatter.RFC_1123_DATE_TIME)
                    .toInstant();
            return Math.max(0, Duration.between(now, at).toSeconds());
        } catch (DateTimeParseException e) {
            return null;
        }
    }

    private static String cut(String text) {
        return text.length() > MAX_ERROR_BODY ? text.substring(0, MAX_ERROR_BODY) + "..." : text;
    }
}
