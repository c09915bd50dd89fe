package dev.taskline.http;

import dev.taskline.auth.ApiKeys;
import dev.taskline.auth.FailedAttempts;
import dev.taskline.auth.SessionRevocations;
import dev.taskline.auth.SessionTokens;
import dev.taskline.auth.StreamTokens;
import dev.taskline.config.AuthConfig;
import dev.taskline.config.TasklineConfig;
import dev.taskline.model.problem.ApiException;
import dev.taskline.model.problem.ForbiddenException;
import dev.taskline.service.Caller;
import dev.taskline.service.Scope;
import io.vertx.core.Handler;
import io.vertx.core.http.Cookie;
import io.vertx.core.http.HttpMethod;
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
 * is 401, or 429 once its client address, or the key it presents, has failed too often this minute
 * (a key that holds is never refused for others' failures). A browser's {@code EventSource}, which
 * cannot send that header, opens a stream with the signed {@code token} its {@code eventsUrl}
 * carries: that stream only, as the tenant it names. The dashboard signs in once and then sends its
 * session cookie; a request of it that changes something must echo the session's CSRF value in
 * {@code X-CSRF-Token}, else 403; a session signed out is over on every node. The client's address
 * is the peer's, or what a trusted proxy says it is ({@link Forwarding}). What the caller may do is
 * the service's to decide; this only says who it is. Shared by the node's HTTP instances.
 */
public final class Authentication implements Handler<RoutingContext> {

    private static final String SCHEME = "Bearer ";
    private static final Pattern STREAM = Pattern.compile("/api/(tasks|batches|flows)/([0-9a-fA-F-]{36})/events");

    private final AuthConfig config;
    private final ApiKeys keys;
    private final FailedAttempts addressFailures;
    private final FailedAttempts keyFailures;
    private final StreamTokens streams;
    private final SessionTokens sessions;
    private final SessionRevocations revocations;
    private final Forwarding forwarding;

    public Authentication(
            AuthConfig config,
            ApiKeys keys,
            StreamTokens streams,
            SessionTokens sessions,
            SessionRevocations revocations,
            TasklineConfig.Proxies proxies,
            Clock clock) {
        this.config = config;
        this.keys = keys;
        this.addressFailures = new FailedAttempts(config.maxFailuresPerMinute(), clock);
        this.keyFailures = new FailedAttempts(config.maxFailuresPerMinute(), clock);
        this.streams = streams;
        this.sessions = sessions;
        this.revocations = revocations;
        this.forwarding = new Forwarding(proxies);
    }

    /**
     * A session for the key {@code caller} signed in with: the cookie value and its CSRF value;
     * null when the caller is not a configured key (auth off, a stream token).
     */
    String[] openSession(Caller caller) {
        AuthConfig.Key key = caller.keyId() == null ? null : keys.byId(caller.keyId());
        return key == null ? null : sessions.open(key.id(), key.hash());
    }

    /** Whether requests must say who they are. */
    boolean enabled() {
        return keys.enabled();
    }

    StreamTokens streams() {
        return streams;
    }

    /** Who the request comes from, and whether over TLS, as the trusted proxies say. */
    Forwarding.Client client(RoutingContext ctx) {
        return forwarding.client(ctx.request());
    }

    @Override
    public void handle(RoutingContext ctx) {
        if (!keys.enabled()
                || (config.openMetrics() && "/metrics".equals(ctx.request().path()))) {
            ctx.next(); // anonymous
            return;
        }
        List<String> given = ctx.request().headers().getAll("Authorization");
        String refusal;
        String presented = null;
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
            key = session == null || revocations.revoked(session) ? null : keys.byId(session.keyId());
            if (key != null && !session.openedWith(key.hash())) {
                key = null; // the key has a new secret since: whoever held the old one is out
            }
            if (key == null) {
                refusal = "the session is over (signed out, expired, or its key was removed or given a new secret); "
                        + "sign in again";
            } else if (changes(ctx) && !session.csrfMatches(ctx.request().getHeader("X-CSRF-Token"))) {
                // A page of another site may make the browser send the cookie, but cannot read the value.
                ctx.fail(new ForbiddenException("send the session's CSRF value in X-CSRF-Token"));
                return;
            } else {
                Requests.session(ctx, session);
                refusal = null;
            }
        } else if (given.isEmpty()) {
            refusal = "send Authorization: Bearer <key>";
        } else if (given.size() > 1) {
            refusal = "send one Authorization header, not " + given.size();
        } else if (!given.get(0).regionMatches(true, 0, SCHEME, 0, SCHEME.length())) {
            refusal = "Authorization must use the Bearer scheme";
        } else {
            presented = given.get(0).substring(SCHEME.length()).trim();
            key = keys.find(presented);
            refusal = key == null ? "the key is not known here (revoked, mistyped, or another node's)" : null;
        }
        if (refusal != null) {
            refuse(ctx, refusal, presented);
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

    /**
     * A failed authentication: counted for the client's address and for the key it presented (if
     * any); answered 401, or 429 once either has failed too often this minute.
     */
    private void refuse(RoutingContext ctx, String refusal, String presented) {
        String address = client(ctx).address();
        String keyDigest = presented == null || presented.isEmpty() ? null : ApiKeys.hash(presented);
        // Whether it was over the bound before this one: the bound is the number of 401s a minute.
        long blocked = Math.max(
                addressFailures.blockedForSeconds(address),
                keyDigest == null ? 0 : keyFailures.blockedForSeconds(keyDigest));
        addressFailures.failed(address);
        if (keyDigest != null) {
            keyFailures.failed(keyDigest);
        }
        ctx.fail(blocked > 0 ? ApiException.tooManyFailures(blocked) : ApiException.unauthorized(refusal));
    }

    private static boolean changes(RoutingContext ctx) {
        HttpMethod method = ctx.request().method();
        return method != HttpMethod.GET && method != HttpMethod.HEAD;
    }

    /** The caller a stream token makes on the stream it was signed for, or null. */
    private Caller streamer(RoutingContext ctx, String token) {
        Matcher stream = STREAM.matcher(ctx.request().path());
        if (!stream.matches() || ctx.request().method() != HttpMethod.GET) {
            return null;
        }
        StreamTokens.Grant grant = streams.verify(token);
        String kind = switch (stream.group(1)) {
            case "tasks" -> "task";
            case "flows" -> "flow";
            default -> "batch";
        };
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
