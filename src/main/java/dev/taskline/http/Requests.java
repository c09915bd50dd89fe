package dev.taskline.http;

import dev.taskline.auth.SessionTokens;
import dev.taskline.model.StoredJson;
import dev.taskline.model.problem.ApiException;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.NotFoundException;
import dev.taskline.service.Caller;
import io.vertx.core.json.DecodeException;
import io.vertx.core.json.Json;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.RoutingContext;
import java.util.LinkedHashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.UUID;

/** Reading what a request says, the same way on every route; what it cannot read is a 4xx. */
final class Requests {

    private Requests() {}

    /** Where the authentication handler leaves who is asking, for the routes after it. */
    private static final String CALLER = "taskline.caller";

    /** Who is asking: the key the authentication handler found, or anonymous when auth is off. */
    static Caller caller(RoutingContext ctx) {
        Caller caller = ctx.get(CALLER);
        return caller == null ? Caller.ANONYMOUS : caller;
    }

    /** Where the authentication handler leaves the session a cookie named, for signing it out. */
    private static final String SESSION = "taskline.session";

    /** The session the request was made in, or null (a key, a token, no auth). */
    static SessionTokens.Session session(RoutingContext ctx) {
        return ctx.get(SESSION);
    }

    static void session(RoutingContext ctx, SessionTokens.Session session) {
        ctx.put(SESSION, session);
    }

    /** Says who is asking, for {@link #caller} on the routes after this handler. */
    static void caller(RoutingContext ctx, Caller caller) {
        ctx.put(CALLER, caller);
    }

    static JsonObject jsonBody(RoutingContext ctx) {
        String contentType = ctx.request().getHeader("Content-Type");
        if (contentType == null || !isJson(contentType)) {
            throw ApiException.unsupportedMediaType("send the body as application/json");
        }
        if (ctx.body().isEmpty()) {
            throw ApiException.badRequest("the body is empty; send a JSON object");
        }
        Object parsed;
        try {
            parsed = Json.decodeValue(ctx.body().buffer());
        } catch (DecodeException e) {
            throw ApiException.badRequest("the body is not valid JSON");
        }
        if (!(parsed instanceof JsonObject object)) {
            throw ApiException.badRequest("the body must be a JSON object");
        }
        String flaw = flaw(object, "the body");
        if (flaw != null) {
            throw ApiException.invalidText(flaw);
        }
        return object;
    }

    /**
     * What keeps {@code text} from being stored as it was sent, or null when nothing does (see
     * {@link StoredJson}). Every text a request brings (its path's parameters, its query, its
     * headers, every name and string of its body) is checked before any part of the node sees it.
     */
    static String flaw(String text) {
        return StoredJson.flaw(text);
    }

    /** The first flaw of any name or string in {@code value}, by {@link StoredJson}'s rule; null when none. */
    private static String flaw(Object value, String root) {
        return StoredJson.flaw(value, root);
    }

    /** The path parameter {@code name}, refused (400) when it holds what no text stored can. */
    static String path(RoutingContext ctx, String name) {
        String value = ctx.pathParam(name);
        String flaw = value == null ? null : flaw(value);
        if (flaw != null) {
            throw ApiException.badRequest("the path's " + name + " " + flaw);
        }
        return value;
    }

    private static boolean isJson(String contentType) {
        String mediaType = contentType.split(";", 2)[0].trim().toLowerCase(Locale.ROOT);
        return mediaType.equals("application/json")
                || (mediaType.startsWith("application/") && mediaType.endsWith("+json"));
    }

    /**
     * The strings of the array {@code field}, in order without repeats; null when it is absent.
     *
     * @param refusal what to answer (422) when it is not an array of strings
     */
    static Set<String> strings(JsonObject json, String field, String refusal) {
        Object value = json.getValue(field);
        if (value == null) {
            return null;
        }
        if (!(value instanceof JsonArray array) || !array.stream().allMatch(String.class::isInstance)) {
            throw new InvalidTaskException(refusal);
        }
        Set<String> strings = new LinkedHashSet<>();
        array.forEach(item -> strings.add((String) item));
        return strings;
    }

    /** The {@code :id} path parameter; an id that cannot be one is simply not found. */
    static UUID idParam(RoutingContext ctx) {
        UUID id = uuid(ctx.pathParam("id"));
        if (id == null) {
            throw NotFoundException.notAnId(ctx.pathParam("id"));
        }
        return id;
    }

    static UUID uuid(String text) {
        if (text == null || text.length() != 36) {
            return null;
        }
        try {
            return UUID.fromString(text);
        } catch (IllegalArgumentException e) {
            return null;
        }
    }

    /** A header that may be given at most once; null when absent. */
    static String header(RoutingContext ctx, String name) {
        List<String> values = ctx.request().headers().getAll(name);
        if (values.size() > 1) {
            throw ApiException.badRequest(name + " may be given once");
        }
        String flaw = values.isEmpty() ? null : flaw(values.get(0));
        if (flaw != null) {
            throw ApiException.badRequest(name + " " + flaw);
        }
        return values.isEmpty() ? null : values.get(0);
    }

    /** A query parameter that may be given at most once; null when absent or empty. */
    static String query(RoutingContext ctx, String name) {
        List<String> values = ctx.queryParam(name);
        if (values.isEmpty()) {
            return null;
        }
        if (values.size() > 1) {
            throw ApiException.badRequest(name + " may be given once");
        }
        String value = values.get(0);
        String flaw = flaw(value);
        if (flaw != null) {
            throw ApiException.badRequest(name + " " + flaw);
        }
        return value.isEmpty() ? null : value;
    }

    static void json(RoutingContext ctx, int status, JsonObject body) {
        json(ctx, status, body.encode());
    }

    static void json(RoutingContext ctx, int status, String body) {
        ctx.response()
                .setStatusCode(status)
                .putHeader("Content-Type", "application/json")
                .end(body);
    }
}
