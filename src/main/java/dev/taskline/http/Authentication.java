package dev.taskline.http;

import dev.taskline.auth.ApiKeys;
import dev.taskline.auth.FailedAttempts;
import dev.taskline.auth.SessionTokens;
import dev.taskline.auth.StreamTokens;
import dev.taskline.config.AuthConfig;
import dev.taskline.model.problem.ApiException;
import dev.taskline.model.problem.ForbiddenException;
import dev.taskline.service.Caller;
import dev.taskline.service.Scope;
import io.vertx.core.Handler;
import io.vertx.core.http.Cookie;
import io.vertx.ext.web.RoutingContext;
import java.time.Clock;
import java.util.List;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;

/**
 * Who is calling: with keys configured, every {@code /api} request (and {@code /metrics}, unless
 * it is open) must carry {@code Authorization: Bearer <key>}; a missing, malformed or unknown one
 * is 401, and a client address past its failures for the minute is 429 before its key is read.
 * A browser's {@code EventSource}, which cannot send that header, opens a stream with the signed
 * {@code token} its {@code eventsUrl} carries: that stream only, as the tenant it names. The
 * dashboard signs in once and then sends its session cookie; a request of it that changes
 * something must echo the session's CSRF value in {@code X-CSRF-Token}, else 403.
 * What the caller may do is the service's to decide; this only says who it is. Shared by the
 * node's HTTP instances.
 */
public final class Authentication implements Handler<RoutingContext> {

    private static final String SCHEME = "Bearer ";
    private static final Pattern STREAM = Pattern.compile("/api/(tasks|batches)/([0-9a-fA-F-]{36})/events");

    private final AuthConfig config;
    private final ApiKeys keys;
    private final FailedAttempts failures;
    private final StreamTokens streams;
    private final SessionTokens sessions;

    public Authentication(AuthConfig config, ApiKeys keys, StreamTokens streams, SessionTokens sessions, Clock clock) {
        this.config = config;
        this.keys = keys;
        this.failures = new FailedAttempts(config.maxFailuresPerMinute(), clock);
        this.streams = streams;
        this.sessions = sessions;
    }

    /**
     * A session for the key {@code caller} signed in with: the cookie value and its CSRF value;
     * null when the caller is not a configured key (auth off, a stream token).
     */
    String[] openSession(Caller caller) {
        return caller.keyId() == null || keys.byId(caller.keyId()) == null ? null : sessions.open(caller.keyId());
    }

    /** Whether requests must say who they are. */
    boolean enabled() {
        return keys.enabled();
    }

    StreamTokens streams() {
        return streams;
    }

    @Override
    public void handle(RoutingContext ctx) {
        if (!keys.enabled()
                || (config.openMetrics() && "/metrics".equals(ctx.request().path()))) {
            ctx.next(); // anonymous
            return;
        }
        String address = ctx.request().remoteAddress() == null
                ? "?"
                : ctx.request().remoteAddress().hostAddress();
        long blocked = failures.blockedForSeconds(address);
        if (blocked > 0) {
            ctx.fail(ApiException.tooManyFailures(blocked));
            return;
        }
        List<String> given = ctx.request().headers().getAll("Authorization");
        String refusal = null;
        AuthConfig.Key key = null;
        // The one reading of a query parameter every route shares: two tokens, or a NUL, are a 400.
        String token = Requests.query(ctx, "token");
        Cookie cookie = ctx.request().getCookie(SessionTokens.COOKIE);
        if (given.isEmpty() && token != null) {
            Caller streamer = streamer(ctx, token);
            if (streamer != null) {
                Requests.caller(ctx, streamer);
                ctx.next();
                return;
            }
            refusal = "the token is expired, forged, or for another stream";
        } else if (given.isEmpty() && cookie != null) {
            SessionTokens.Session session = sessions.verify(cookie.getValue());
            key = session == null ? null : keys.byId(session.keyId());
            if (key == null) {
                refusal = "the session is over (expired, or its key was removed); sign in again";
            } else if (changes(ctx) && !session.csrf().equals(ctx.request().getHeader("X-CSRF-Token"))) {
                // A page of another site may make the browser send the cookie, but cannot read the value.
                ctx.fail(new ForbiddenException("send the session's CSRF value in X-CSRF-Token"));
                return;
            }
        } else if (given.isEmpty()) {
            refusal = "send Authorization: Bearer <key>";
        } else if (given.size() > 1) {
            refusal = "send one Authorization header, not " + given.size();
        } else if (!given.get(0).regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
            refusal = "Authorization must use the Bearer scheme";
        } else {
            key = keys.find(given.get(0).substring(SCHEME.length()).trim());
            if (key == null) {
                refusal = "the key is not known here (revoked, mistyped, or another node's)";
            }
        }
        if (refusal != null) {
            failures.failed(address);
            ctx.fail(ApiException.unauthorized(refusal));
            return;
        }
        Requests.caller(
                ctx,
                new Caller(
                        key.id(),
                        key.tenant(),
                        key.scopes().stream().map(Scope::of).collect(Collectors.toSet()),
                        Set.copyOf(key.queues())));
        ctx.next();
    }

    private static boolean changes(RoutingContext ctx) {
        io.vertx.core.http.HttpMethod method = ctx.request().method();
        return method != io.vertx.core.http.HttpMethod.GET && method != io.vertx.core.http.HttpMethod.HEAD;
    }

    /** The caller a stream token makes on the stream it was signed for, or null. */
    private Caller streamer(RoutingContext ctx, String token) {
        Matcher stream = STREAM.matcher(ctx.request().path());
        if (!stream.matches() || ctx.request().method() != io.vertx.core.http.HttpMethod.GET) {
            return null;
        }
        StreamTokens.Grant grant = streams.verify(token);
        String kind = stream.group(1).equals("tasks") ? "task" : "batch";
        if (grant == null
                || !grant.kind().equals(kind)
                || !grant.id().toString().equalsIgnoreCase(stream.group(2))) {
            return null;
        }
        // The token's own digest names it: one token opens one stream at a time.
        return Caller.streamToken(
                ApiKeys.hash(token).substring("sha256:".length(), "sha256:".length() + 32), grant.tenant());
    }
}
