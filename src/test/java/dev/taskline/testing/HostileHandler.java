package dev.taskline.testing;

import dev.taskline.handler.TaskContext;
import dev.taskline.handler.TaskHandler;
import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.time.Instant;

/**
 * {@code hostile}: a handler whose code makes what no request could bring (a request with a NUL
 * is refused before any part of the node sees it), to show how the node records such an end.
 * {@code payload.do}: {@code nul-result}, {@code long-key} (a field name longer than the JSON
 * decoder reads back), {@code big-result} ({@code payload.bytes} of text), {@code not-json} (a
 * value that is no JSON), {@code nul-step} (a step named with a NUL), {@code nul-step-result},
 * {@code far-sleep} (until the year 10⁹), {@code long-wait} (a signal's timeout of 10⁹ years),
 * {@code big-step} (a step's result of {@code payload.bytes} of text), {@code nul-spawn} (a flow task spawning a task whose payload has a NUL).
 */
public final class HostileHandler implements TaskHandler {

    public static final Instant FAR = Instant.parse("+1000000000-01-01T00:00:00Z");

    @Override
    public String type() {
        return "hostile";
    }

    @Override
    public Future<JsonObject> run(TaskContext ctx) {
        String what = ctx.payload().getString("do");
        return switch (what) {
            case "nul-result" -> Future.succeededFuture(new JsonObject().put("text", "a\u0000b"));
            case "long-key" -> Future.succeededFuture(new JsonObject().put("k".repeat(60_000), 1));
            case "big-result" ->
                Future.succeededFuture(
                        new JsonObject().put("blob", "x".repeat(ctx.payload().getInteger("bytes"))));
            case "not-json" -> Future.succeededFuture(new JsonObject().put("thing", new Object()));
            case "nul-step" ->
                ctx.step("a\u0000b", () -> Future.succeededFuture(1)).map(v -> new JsonObject());
            case "nul-step-result" ->
                ctx.step("fine", () -> Future.succeededFuture("a\u0000b")).map(v -> new JsonObject());
            case "big-step" ->
                ctx.step(
                                "big",
                                () -> Future.succeededFuture(
                                        "x".repeat(ctx.payload().getInteger("bytes"))))
                        .map(v -> new JsonObject());
            case "far-sleep" -> ctx.sleepUntil("nap", FAR).map(v -> new JsonObject());
            case "long-wait" ->
                ctx.waitForSignal("go", Duration.ofDays(365L * 1_000_000_000)).map(v -> new JsonObject());
            case "nul-spawn" -> {
                ctx.spawn(new JsonObject()
                        .put("type", "sleep")
                        .put("payload", new JsonObject().put("ms", 0).put("note", "a\u0000b")));
                yield Future.succeededFuture(new JsonObject());
            }
            default -> Future.failedFuture(new IllegalArgumentException("no such hostile act: " + what));
        };
    }
}
