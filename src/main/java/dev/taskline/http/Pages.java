package dev.taskline.http;

import dev.taskline.model.problem.ApiException;
import io.vertx.ext.web.RoutingContext;
import java.util.UUID;

/** A keyset page's query, {@code limit} and {@code after}, read the same way by every list. */
final class Pages {

    static final int DEFAULT = 50;
    static final int MOST = 1000;

    private Pages() {}

    /** {@code limit}: 1 to {@value #MOST}, {@value #DEFAULT} when not given; else 400. */
    static int limit(RoutingContext ctx) {
        String text = Requests.query(ctx, "limit");
        if (text == null) {
            return DEFAULT;
        }
        int limit;
        try {
            limit = Integer.parseInt(text);
        } catch (NumberFormatException e) {
            limit = -1;
        }
        if (limit < 1 || limit > MOST) {
            throw ApiException.badRequest("limit must be an integer from 1 to " + MOST);
        }
        return limit;
    }

    /** {@code after}: the id the previous page ended with (null: the first page); else 400 naming {@code what}. */
    static UUID after(RoutingContext ctx, String what) {
        String text = Requests.query(ctx, "after");
        UUID after = text == null ? null : Requests.uuid(text);
        if (text != null && after == null) {
            throw ApiException.badRequest("after must be " + what);
        }
        return after;
    }
}
