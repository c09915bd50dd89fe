package dev.taskline.service;

import io.vertx.core.Future;
import java.util.function.Supplier;

/** How every service starts an operation: the caller's checks first, as the first step of its chain. */
final class Permits {

    private Permits() {}

    /** Runs {@code action}; a refusal it throws (403, a bad field) becomes its failed future. */
    static <T> Future<T> allowed(Supplier<Future<T>> action) {
        try {
            return action.get();
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }

    /** Succeeds when {@code check} does not throw; the start of a chain that must not run otherwise. */
    static Future<Void> permitted(Runnable check) {
        try {
            check.run();
            return Future.succeededFuture();
        } catch (RuntimeException e) {
            return Future.failedFuture(e);
        }
    }
}
