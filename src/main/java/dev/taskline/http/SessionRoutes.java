package dev.taskline.http;

import dev.taskline.auth.SessionTokens;
import dev.taskline.model.problem.ApiException;
import dev.taskline.service.Caller;
import dev.taskline.service.KeyService;
import io.vertx.core.Future;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code /api/session}: the dashboard signs in with a key (Bearer, once) and gets a session
 * cookie it cannot read (HttpOnly, SameSite=Strict) and the CSRF value its changes must echo;
 * {@code DELETE} signs out: the session is over on every node, not only in this browser. The
 * cookie is {@code Secure} whenever the request came over TLS, to the node or to a trusted proxy
 * that says so.
 */
final class SessionRoutes implements Routes {

    private final Authentication authentication;
    private final KeyService keys;

    SessionRoutes(Authentication authentication, KeyService keys) {
        this.authentication = authentication;
        this.keys = keys;
    }

    @Override
    public void mount(Router router) {
        router.post("/api/session").handler(this::open);
        router.delete("/api/session").handler(this::close);
    }

    private void open(RoutingContext ctx) {
        if (Requests.session(ctx) != null) {
            // Else whoever holds a cookie and its CSRF value could go on making sessions that outlive
            // the one they took, and its sign-out.
            throw ApiException.badRequest(
                    "a session does not open another: sign in with the key (Authorization: Bearer)");
        }
        Caller caller = Requests.caller(ctx);
        String[] session = authentication.openSession(caller);
        if (session == null) {
            throw ApiException.badRequest(
                    authentication.enabled()
                            ? "sign in with a key: Authorization: Bearer <key>"
                            : "no key is configured: the API is open, no session needed");
        }
        ctx.response().addCookie(cookie(ctx, session[0], SessionTokens.TTL_SECONDS));
        JsonArray scopes = new JsonArray();
        caller.scopes().stream().map(s -> s.label()).sorted().forEach(scopes::add);
        Requests.json(
                ctx,
                200,
                new JsonObject()
                        .put("keyId", caller.keyId())
                        .put("tenant", caller.tenant())
                        .put("scopes", scopes)
                        .put("csrf", session[1]));
    }

    private void close(RoutingContext ctx) {
        SessionTokens.Session session = Requests.session(ctx);
        Future<Void> signedOut =
                session == null ? Future.succeededFuture() : keys.signOut(Requests.caller(ctx), session);
        signedOut
                .onSuccess(v -> ctx.response()
                        .addCookie(cookie(ctx, "", 0))
                        .setStatusCode(204)
                        .end())
                .onFailure(ctx::fail);
    }

    private Cookie cookie(RoutingContext ctx, String value, long maxAgeSeconds) {
        return Cookie.cookie(SessionTokens.COOKIE, value)
                .setPath("/")
                .setHttpOnly(true)
                .setSecure(authentication.client(ctx).secure())
                .setSameSite(CookieSameSite.STRICT)
                .setMaxAge(maxAgeSeconds);
    }
}
