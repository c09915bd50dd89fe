package dev.taskline.cluster;

import dev.taskline.journal.Servers;
import io.vertx.core.Future;
import io.vertx.core.Promise;
import io.vertx.core.VerticleBase;
import io.vertx.pgclient.pubsub.PgSubscriber;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * The node's listening connection: one connection of its own, outside the pool (a pooled connection
 * is lent to a statement at a time, and LISTEN belongs to a session), subscribed to the channels the
 * journal's triggers notify (migration 000020). A lost connection is made again with a growing
 * backoff, each time to the server the URL's session attributes choose then ({@link Servers}), so
 * that it follows a failover to the new primary (a standby refuses LISTEN, and hears nothing the
 * primary is told); the first connection is not retried: a node whose listening URL does not
 * answer does not start. Each time it is subscribed, the first time too, every channel's handler
 * runs once with a null payload, for what was said while nobody listened (each handler then reads
 * the journal, as it does on any notification). The timed passes go on meanwhile, as the fallback.
 *
 * <p>Where the URL reaches PostgreSQL through a pooler ({@link Servers.Server#pooled}), there is no
 * session of its own to listen in: the node says so once and, instead of listening, runs every
 * channel's handler with a null payload every {@link #POLL_MS}, while the timed passes run at their
 * own pace, as when the connection is lost.
 */
public final class Listener extends VerticleBase {

    private static final Logger LOG = Logger.getLogger(Listener.class.getName());
    static final long FIRST_RETRY_MS = 100;
    static final long MOST_RETRY_MS = 5_000;
    /** How often each channel is taken as told where there is no listening: the recovery pass's pace. */
    static final long POLL_MS = 1_000;

    private final Servers servers;
    private final Map<String, Consumer<String>> channels = new LinkedHashMap<>();
    private PgSubscriber subscriber;
    /** The subscriber whose connection was made: only its loss starts a reconnection (a failed attempt retries itself). */
    private PgSubscriber live;

    private volatile boolean subscribed;
    private volatile boolean stopped;
    private boolean heardOnce;

    /** @param servers where to listen: a direct connection (a pooler in transaction mode cannot carry LISTEN) */
    public Listener(Servers servers) {
        this.servers = servers;
    }

    /**
     * Calls {@code handler} with each notification's payload on {@code channel} (a hint, never to be
     * trusted: the handler reads the journal), on this verticle's context; with null after a
     * reconnection. Set before the verticle is deployed.
     */
    public Listener on(String channel, Consumer<String> handler) {
        channels.put(channel, handler);
        return this;
    }

    /** Whether the connection is up and subscribed: the timed passes may go at their slower pace. */
    public boolean listening() {
        PgSubscriber now = subscriber;
        return subscribed && now != null && now.actualConnection() != null;
    }

    @Override
    public Future<?> start() {
        return connect();
    }

    /** One subscriber per connection: the client's own reconnection would go back to the same host. */
    private Future<Void> connect() {
        return located().compose(server -> {
            if (stopped) {
                return Future.succeededFuture();
            }
            if (server.pooled()) {
                poll();
                return Future.succeededFuture();
            }
            PgSubscriber made = PgSubscriber.subscriber(vertx, server.options()).reconnectPolicy(retries -> -1L);
            // The subscribe handlers run once the connection is made, one per channel; the last
            // channel's marks the whole subscription.
            String last = channels.keySet().stream().reduce((a, b) -> b).orElse(null);
            channels.forEach((channel, handler) -> made.channel(channel)
                    .handler(handler::accept)
                    .subscribeHandler(v -> {
                        if (!channel.equals(last)) {
                            return;
                        }
                        // The first subscription too: what was said between the node's first reads (the
                        // switches, the keys) and its LISTEN was heard by no one.
                        if (heardOnce) {
                            LOG.info("listening again; catching up with what was said meanwhile");
                        }
                        heardOnce = true;
                        subscribed = true;
                        channels.values().forEach(h -> h.accept(null));
                    }));
            made.closeHandler(v -> {
                if (live == made) {
                    live = null;
                    subscribed = false;
                    if (!stopped) {
                        LOG.warning("the listening connection was lost; connecting again");
                        again(0);
                    }
                }
            });
            subscriber = made;
            return made.connect().onSuccess(v -> live = made);
        });
    }

    /**
     * The server the shared choice gives, answered on this verticle's context: the choice may be one
     * a pool's connection started on another event loop, whose context would run what follows.
     */
    private Future<Servers.Server> located() {
        Promise<Servers.Server> here = Promise.promise();
        servers.locate().onComplete(done -> context.runOnContext(v -> here.handle(done)));
        return here.future();
    }

    /** Called once: with no subscriber, nothing is lost and nothing connects again. */
    private void poll() {
        LOG.warning("the journal is reached through a connection pooler, which lends a session to a"
                + " transaction at a time: LISTEN cannot be carried, so what the other nodes tell (work due,"
                + " keys, switches, schedules, task events) is read every " + POLL_MS + " ms instead of at once."
                + " Set TASKLINE_PG_LISTEN_URL (cluster.listenUrl) to PostgreSQL itself to listen.");
        vertx.setPeriodic(POLL_MS, id -> {
            if (stopped) {
                vertx.cancelTimer(id);
            } else {
                channels.values().forEach(h -> h.accept(null));
            }
        });
    }

    private void again(int retries) {
        long delay = Math.min(MOST_RETRY_MS, FIRST_RETRY_MS << Math.min(retries, 6));
        vertx.setTimer(delay, t -> {
            if (!stopped) {
                connect().onFailure(e -> again(retries + 1));
            }
        });
    }

    @Override
    public Future<?> stop() {
        stopped = true;
        subscribed = false;
        PgSubscriber now = subscriber;
        return now == null ? Future.succeededFuture() : now.close();
    }
}
