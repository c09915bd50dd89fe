package dev.taskline.handler;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;

/**
 * {@code onboarding}: the onboarding function, started by the event {@code user.created} through a
 * trigger (the event's data, {@code {userId, email}}, as its payload). Sends the welcome mail,
 * waits up to a day for the user's first {@code user.login} event, sends tips to a user who came or
 * a nudge to one who did not, sleeps three days and asks for feedback. {@code dayMs} (a day by
 * default) shortens the days for demos. Each mail is stood in for by its step's result.
 */
public final class OnboardingHandler implements TaskHandler {

    static final long DAY_MS = 24 * 3600 * 1000L;

    @Override
    public String type() {
        return "onboarding";
    }

    @Override
    public void validate(JsonObject payload) throws InvalidPayloadException {
        Object user = payload.getValue("userId");
        if (!(user instanceof String || user instanceof Number)) {
            throw new InvalidPayloadException("payload.userId must be a string or a number");
        }
    }

    @Override
    public Future<JsonObject> run(TaskContext ctx) {
        JsonObject user = ctx.payload();
        Object userId = user.getValue("userId");
        long day = user.getLong("dayMs", DAY_MS);
        JsonObject sent = new JsonObject().put("userId", userId);
        return ctx.<JsonObject>step("welcome-mail", () -> mail(ctx, "welcome-mail", user))
                .compose(welcome ->
                        ctx.waitForEvent("first-login", "user.login", "data.userId", userId, Duration.ofMillis(day)))
                .compose(login -> {
                    sent.put("loggedIn", login.isPresent());
                    String next = login.isPresent() ? "tips-mail" : "nudge-mail";
                    return ctx.<JsonObject>step(next, () -> mail(ctx, next, user));
                })
                .compose(mail -> ctx.sleep("wait-3-days", Duration.ofMillis(3 * day)))
                .compose(v -> ctx.<JsonObject>step("survey-mail", () -> mail(ctx, "survey-mail", user)))
                .map(survey -> sent.put("status", "onboarded"));
    }

    private static Future<JsonObject> mail(TaskContext ctx, String which, JsonObject user) {
        return Future.succeededFuture(new JsonObject()
                .put("mail", which)
                .put("to", user.getString("email"))
                .put("idempotencyKey", ctx.stepId(which)));
    }
}
