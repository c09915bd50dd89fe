package dev.taskline.http;

import dev.taskline.auth.SessionTokens;
import dev.taskline.model.problem.ApiException;
import dev.taskline.service.Caller;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.CookieSameSite;
import io.vertx.core.json.JsonArray;
import io.vertx.core.json.JsonObject;
import io.vertx.ext.web.Router;
import io.vertx.ext.web.RoutingContext;

/**
 * {@code /api/session}: the dashboard signs in with a key (Bearer, once) and gets a session
 * cookie it cannot read (HttpOnly, SameSite=Strict) and the CSRF value its changes must echo;
 * {@code DELETE} signs out.
 */
final class SessionRoutes implements Routes {

    private final Authentication authentication;
    private final boolean secure;

    /** @param secure the node serves HTTPS: the cookie then goes over HTTPS only */
    SessionRoutes(Authentication authentication, boolean secure) {
        this.authentication = authentication;
        this.secure = secure;
    }

    @Override
    public void mount(Router router) {
        router.post("/api/session").handler(this::open);
        router.delete("/api/session").handler(this::close);
    }

    private void open(RoutingContext ctx) {
        Caller caller = Requests.caller(ctx);
        String[] session = authentication.openSession(caller);
        if (session == null) {
            throw ApiException.badRequest(
                    authentication.enabled()
                            ? "sign in with a key: Authorization: Bearer <key>"
                            : "no key is configured: the API is open, no session needed");
        }
        ctx.response().addCookie(cookie(session[0], SessionTokens.TTL_SECONDS));
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
        ctx.response().addCookie(cookie("", 0)).setStatusCode(204).end();
    }

    private Cookie cookie(String value, long maxAgeSeconds) {
        return Cookie.cookie(SessionTokens.COOKIE, value)
                .setPath("/")
                .setHttpOnly(true)
                .setSecure(secure)
                .setSameSite(CookieSameSite.STRICT)
                .setMaxAge(maxAgeSeconds);
    }
}
