package dev.taskline.service;

import static dev.taskline.service.Permits.permitted;

import dev.taskline.auth.ApiKeys;
import dev.taskline.auth.SessionRevocations;
import dev.taskline.auth.SessionTokens;
import dev.taskline.config.AuthConfig;
import dev.taskline.config.ConfigException;
import dev.taskline.journal.JournalKeys;
import dev.taskline.model.KeyRecord;
import dev.taskline.model.StoredKey;
import dev.taskline.model.problem.InvalidTaskException;
import dev.taskline.model.problem.KeyConflictException;
import dev.taskline.model.problem.KeyRefusedException;
import dev.taskline.model.problem.NotFoundException;
import io.vertx.core.Future;
import java.security.SecureRandom;
import java.time.Instant;
import java.util.ArrayList;
import java.util.List;
import java.util.Set;
import java.util.concurrent.atomic.AtomicLong;

/** The API keys issued through the API, beside the config's: issue, list, revoke; and every node's read of them. */
public final class KeyService {

    private final ApiKeys keys;
    private final SessionRevocations revocations;
    private final JournalKeys journalKeys;
    private final SecureRandom random = new SecureRandom();

    public KeyService(ApiKeys keys, SessionRevocations revocations, JournalKeys journalKeys) {
        this.keys = keys;
        this.revocations = revocations;
        this.journalKeys = journalKeys;
    }

    /**
     * Signs {@code session} out: refused on this node at once and on the others at their next read
     * (within a second), though its cookie's signature still holds until it expires. A key past its
     * bound of single sign-outs signs out all its older sessions with this one (see
     * {@link SessionRevocations}); this node learns of that at its next read.
     */
    public Future<Void> signOut(Caller caller, SessionTokens.Session session) {
        String digest = SessionRevocations.digest(session.csrf());
        Instant expires = Instant.ofEpochSecond(session.expiresAt());
        return journalKeys
                .revokeSession(
                        digest,
                        expires,
                        caller.keyId(),
                        SessionRevocations.MOST_PER_KEY,
                        SessionRevocations.sessionTtl())
                .onSuccess(v -> revocations.add(digest, caller.keyId(), expires));
    }

    /**
     * Issues a key (id null: one is made up), stored by its hash; the answer holds its secret, this
     * once. This node knows it at once, the others at their next read of the keys (within a second).
     * On a node with no key yet (auth off), the first must be an admin key: it turns auth on.
     */
    public Future<Views.IssuedKey> issue(
            Caller caller, String id, String tenant, Set<String> scopes, Set<String> queues) {
        return permitted(() -> caller.require(Scope.ADMIN)).compose(v -> {
            String secret = ApiKeys.newSecret(random);
            String keyId = id != null ? id : ApiKeys.idFor(secret);
            AuthConfig.Key key;
            try {
                key = new AuthConfig.Key(keyId, ApiKeys.hash(secret), tenant, scopes, queues);
            } catch (ConfigException e) {
                return Future.failedFuture(new InvalidTaskException(e.getMessage()
                        .replace("auth.keys[" + keyId + "]", "key")
                        .replace("auth.keys: ", "")));
            }
            if (keys.configured(keyId)) {
                return Future.failedFuture(new KeyConflictException("key '" + keyId + "' is one of the config's"));
            }
            List<String> sortedScopes = key.scopes().stream().sorted().toList();
            List<String> sortedQueues = key.queues().stream().sorted().toList();
            return journalKeys
                    .insert(
                            new StoredKey(key.id(), key.hash(), key.tenant(), sortedScopes, sortedQueues),
                            caller.keyId(),
                            keys.anyConfigured())
                    .compose(outcome -> switch (outcome) {
                        case STORED -> refresh();
                        case TAKEN ->
                            Future.failedFuture(new KeyConflictException("key '" + keyId + "' exists (or existed)"));
                        case NOT_ADMIN_FIRST ->
                            Future.failedFuture(new KeyRefusedException(
                                    "this node has no key yet, and the first key turns auth on: were it not an admin key,"
                                            + " every later call would need a key and none could issue or revoke one."
                                            + " Issue an admin key first ({\"scopes\": [\"admin\"]}, no tenant), then"
                                            + " this one with it"));
                    })
                    .map(done -> new Views.IssuedKey(key.id(), secret, key.tenant(), sortedScopes, sortedQueues));
        });
    }

    /** Every key: the config's, and those issued through the API (revoked ones with their time). */
    public Future<List<Views.KeyInfo>> list(Caller caller, List<AuthConfig.Key> configured) {
        return permitted(() -> caller.require(Scope.ADMIN))
                .compose(v -> journalKeys.all())
                .map(issued -> {
                    List<Views.KeyInfo> all = new ArrayList<>();
                    for (AuthConfig.Key key : configured) {
                        all.add(new Views.KeyInfo(
                                key.id(),
                                key.tenant(),
                                key.scopes().stream().sorted().toList(),
                                key.queues().stream().sorted().toList(),
                                "config",
                                null,
                                null,
                                null,
                                null));
                    }
                    for (KeyRecord key : issued) {
                        all.add(new Views.KeyInfo(
                                key.id(),
                                key.tenant(),
                                key.scopes(),
                                key.queues(),
                                "api",
                                key.createdAt(),
                                key.createdBy(),
                                key.revokedAt(),
                                key.revokedBy()));
                    }
                    return all;
                });
    }

    /**
     * Revokes an issued key: this node refuses it at once, the others within a second. The last
     * admin key is kept (unless the config holds one): auth stays on once a key exists, and a node
     * with no admin key could never issue or revoke one again.
     */
    public Future<Void> revoke(Caller caller, String id) {
        return permitted(() -> caller.require(Scope.ADMIN)).compose(v -> {
            if (keys.configured(id)) {
                return Future.failedFuture(
                        new KeyConflictException("key '" + id + "' is one of the config's: remove it there"));
            }
            return journalKeys
                    .revoke(id, caller.keyId(), keys.adminConfigured())
                    .compose(outcome -> switch (outcome) {
                        case REVOKED -> refresh();
                        case UNKNOWN -> Future.failedFuture(NotFoundException.key(id));
                        case LAST_ADMIN ->
                            Future.failedFuture(new KeyConflictException("key '" + id
                                    + "' is the last admin key: without it no one could issue or revoke keys."
                                    + " Issue another admin key first, then revoke this one with it"));
                    });
        });
    }

    /**
     * Reads the live issued keys and the signed-out sessions from the journal: what every node does
     * every second. The two reads are apart: one failing leaves the other's news in.
     */
    // Reads may answer out of order (a notification's and the timer's, on two connections): one issued
    // later saw a later journal, so an answer older than the last one applied is dropped rather than
    // bring back a key just revoked.
    private final AtomicLong reads = new AtomicLong();

    private long applied; // guarded by this

    private synchronized void apply(long read, List<AuthConfig.Key> next) {
        if (read < applied) {
            return;
        }
        applied = read;
        keys.replaceIssued(next);
    }

    public Future<Void> refresh() {
        Future<Void> sessions = journalKeys.revokedSessions().map(revoked -> {
            revocations.merge(revoked);
            return null;
        });
        long read = reads.incrementAndGet();
        Future<Void> issued = journalKeys.live().map(live -> {
            List<AuthConfig.Key> next = new ArrayList<>(live.size());
            for (StoredKey k : live) {
                next.add(new AuthConfig.Key(
                        k.id(), k.hash(), k.tenant(), Set.copyOf(k.scopes()), Set.copyOf(k.queues())));
            }
            apply(read, next);
            return null;
        });
        return Future.join(sessions, issued).mapEmpty();
    }
}
