package dev.taskline.handler;

import io.vertx.core.Future;
import io.vertx.core.json.JsonObject;
import java.time.Duration;
import java.util.Optional;

/**
 * {@code order}: the order saga, in durable steps. Reserve the stock, wait up to {@code
 * paymentTimeoutMs} (30 minutes by default) for the signal {@code payment}, charge the card, ship,
 * send the mail. When the payment does not come, is refused ({@code {"paid": false}}), or the
 * charge is declined ({@code "declineCharge": true}), it undoes what it did (releases the stock,
 * refunds a charge) and fails; after a compensating cancel it undoes the same and ends cancelled.
 * Each outside effect is stood in for by its step's result, keyed by {@link TaskContext#stepId}:
 * what a real one would send as its idempotency key. Before each step forward it checks whether it
 * was asked to undo instead.
 */
public final class OrderHandler implements TaskHandler {

    static final long DEFAULT_PAYMENT_TIMEOUT_MS = 30 * 60 * 1000L;

    @Override
    public String type() {
        return "order";
    }

    @Override
    public void validate(JsonObject payload) throws InvalidPayloadException {
        if (!(payload.getValue("orderId") instanceof String id) || id.isEmpty()) {
            throw new InvalidPayloadException("payload.orderId must be a non-empty string");
        }
        Object timeout = payload.getValue("paymentTimeoutMs");
        if (timeout != null && (!(timeout instanceof Number n) || n.longValue() < 0)) {
            throw new InvalidPayloadException("payload.paymentTimeoutMs must be a number of milliseconds");
        }
    }

    @Override
    public Future<JsonObject> run(TaskContext ctx) {
        JsonObject order = ctx.payload();
        JsonObject done = new JsonObject().put("orderId", order.getString("orderId"));
        if (ctx.cancelled()) {
            // A compensating cancel: undo what the runs before did, and no more.
            return ctx.stepDone("reserve")
                    .compose(reserved -> ctx.stepDone("charge")
                            .compose(charged -> reserved
                                    ? undo(ctx, done, charged, null)
                                    : Future.succeededFuture(done.put("status", "compensated"))));
        }
        return ctx.<JsonObject>step("reserve", () -> effect(ctx, "reserve", order))
                .compose(reservation -> {
                    done.put("reservation", reservation);
                    Duration timeout = Duration.ofMillis(order.getLong("paymentTimeoutMs", DEFAULT_PAYMENT_TIMEOUT_MS));
                    return ctx.waitForSignal("payment", timeout);
                })
                .compose(payment -> {
                    if (payment.isEmpty()) {
                        return undo(ctx, done, false, "the payment was not confirmed in time");
                    }
                    if (!payment.get().getBoolean("paid", true)) {
                        return undo(ctx, done, false, "the payment was refused");
                    }
                    done.put("payment", payment.get());
                    return ctx.<JsonObject>step(
                                    "charge",
                                    () -> order.getBoolean("declineCharge", false)
                                            ? Future.succeededFuture(new JsonObject().put("declined", true))
                                            : effect(ctx, "charge", order))
                            .compose(charge -> {
                                if (charge.getBoolean("declined", false)) {
                                    return undo(ctx, done, false, "the card was declined");
                                }
                                done.put("charge", charge);
                                if (ctx.cancelled()) {
                                    return undo(ctx, done, true, null);
                                }
                                return ctx.<JsonObject>step("ship", () -> effect(ctx, "ship", order))
                                        .compose(shipment -> {
                                            done.put("shipment", shipment);
                                            return ctx.<JsonObject>step("email", () -> effect(ctx, "email", order));
                                        })
                                        .map(mail -> done.put("email", mail).put("status", "shipped"));
                            });
                });
    }

    /**
     * Releases the stock and, when {@code charged}, refunds: steps like any, so an undo cut short
     * by a crash resumes where it stopped. {@code failure} null: a compensating cancel, which the
     * success ends cancelled; else the task fails for good, saying why, after undoing.
     */
    private static Future<JsonObject> undo(TaskContext ctx, JsonObject done, boolean charged, String failure) {
        Future<JsonObject> release = ctx.<JsonObject>step("release", () -> effect(ctx, "release", done));
        Future<Optional<JsonObject>> refund = charged
                ? release.compose(r -> ctx.<JsonObject>step("refund", () -> effect(ctx, "refund", done)))
                        .map(Optional::of)
                : release.map(r -> Optional.empty());
        return refund.compose(refunded -> {
            JsonObject undone = done.copy().put("released", release.result());
            refunded.ifPresent(r -> undone.put("refunded", r));
            if (failure != null) {
                return Future.failedFuture(new PermanentTaskException(
                        failure + "; stock released" + (charged ? " and charge refunded" : "")));
            }
            return Future.succeededFuture(undone.put("status", "compensated"));
        });
    }

    /** Stands in for a call to another service, sent with the step's id as its idempotency key. */
    private static Future<JsonObject> effect(TaskContext ctx, String what, JsonObject order) {
        return Future.succeededFuture(new JsonObject()
                .put("effect", what)
                .put("orderId", order.getString("orderId"))
                .put("idempotencyKey", ctx.stepId(what)));
    }
}
