package dev.taskline.http;

import dev.taskline.admission.Admitted;
import dev.taskline.metrics.TasklineMetrics;
import io.vertx.core.Future;
import io.vertx.ext.web.RoutingContext;
import java.util.function.Function;

/**
 * What the two submitting routes share: the request's idempotency key and tenant headers, and
 * the timing of the exchange from the request's arrival to its 202 or 429, which only the HTTP
 * layer sees whole (so that a slow client can be told from a slow node).
 */
final class Submissions {

    private final TasklineMetrics metrics;

    Submissions(TasklineMetrics metrics) {
        this.metrics = metrics;
    }

    static String idempotencyKey(RoutingContext ctx) {
        return Requests.header(ctx, "Idempotency-Key");
    }

    /** Whose tasks these are, for the queues' tenant limits; null when the caller names none. */
    static String tenant(RoutingContext ctx) {
        return Requests.header(ctx, "Taskline-Tenant");
    }

    /** Answers 202 with {@code body} (JSON text) and a {@code Location} once admitted; times the exchange either way. */
    void answer(
            RoutingContext ctx,
            long arrivedNanos,
            Future<Admitted> admitted,
            Function<Admitted, String> location,
            Function<Admitted, String> body) {
        answer(ctx, arrivedNanos, admitted, location, body, Admitted::replayed);
    }

    /** As above, for any answer that may be a replay ({@code replayed} says whether it is). */
    <T> void answer(
            RoutingContext ctx,
            long arrivedNanos,
            Future<T> admitted,
            Function<T, String> location,
            Function<T, String> body,
            java.util.function.Predicate<T> replayed) {
        admitted.onSuccess(done -> {
                    metrics.accepted(System.nanoTime() - arrivedNanos);
                    ctx.response().putHeader("Location", location.apply(done));
                    if (replayed.test(done)) {
                        // The same answer as the first time; the header only tells a curious client it is a replay.
                        ctx.response().putHeader("Idempotent-Replayed", "true");
                    }
                    Requests.json(ctx, 202, body.apply(done));
                })
                .onFailure(e -> {
                    if (Problems.isRefusal(e)) {
                        metrics.refused(System.nanoTime() - arrivedNanos);
                    }
                    ctx.fail(e);
                });
    }
}
