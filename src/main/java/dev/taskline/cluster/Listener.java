package dev.taskline.cluster;

import io.vertx.core.Future;
import io.vertx.core.VerticleBase;
import io.vertx.pgclient.PgConnectOptions;
import io.vertx.pgclient.pubsub.PgSubscriber;
import java.util.LinkedHashMap;
import java.util.Map;
import java.util.function.Consumer;
import java.util.logging.Logger;

/**
 * The node's listening connection: one connection of its own, outside the pool (a pooled connection
 * is lent to a statement at a time, and LISTEN belongs to a session), subscribed to the channels the
 * journal's triggers notify (migration 000020). A lost connection is made again with a growing
 * backoff (the first connection is not retried: a node whose listening URL does not answer does
 * not start); each time it is subscribed, the first time too, every channel's handler runs once
 * with a null payload, for what was said while nobody listened (each handler then reads the
 * journal, as it does on any notification). The timed passes go on meanwhile, as the fallback.
 */
public final class Listener extends VerticleBase {

    private static final Logger LOG = Logger.getLogger(Listener.class.getName());
    static final long FIRST_RETRY_MS = 100;
    static final long MOST_RETRY_MS = 5_000;

    private final PgConnectOptions options;
    private final Map<String, Consumer<String>> channels = new LinkedHashMap<>();
    private PgSubscriber subscriber;
    private volatile boolean subscribed;

    /** @param options where to listen: a direct connection (a pooler in transaction mode cannot carry LISTEN) */
    public Listener(PgConnectOptions options) {
        this.options = options;
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
        return subscribed && subscriber != null && subscriber.actualConnection() != null;
    }

    @Override
    public Future<?> start() {
        subscriber = PgSubscriber.subscriber(vertx, options)
                .reconnectPolicy(retries -> Math.min(MOST_RETRY_MS, FIRST_RETRY_MS << Math.min(retries, 6)));
        subscriber.closeHandler(v -> subscribed = false);
        // The subscribe handlers run on every (re)connection, one per channel; the last channel's marks
        // the whole subscription.
        String last = channels.keySet().stream().reduce((a, b) -> b).orElse(null);
        channels.forEach((channel, handler) -> subscriber
                .channel(channel)
                .handler(handler::accept)
                .subscribeHandler(v -> {
                    if (!channel.equals(last)) {
                        return;
                    }
                    // The first subscription too: what was said between the node's first reads (the
                    // switches, the keys) and its LISTEN was heard by no one.
                    if (subscribed) {
                        LOG.info("listening again; catching up with what was said meanwhile");
                    }
                    subscribed = true;
                    channels.values().forEach(h -> h.accept(null));
                }));
        return subscriber.connect();
    }

    @Override
    public Future<?> stop() {
        subscribed = false;
        return subscriber.close();
    }
}
