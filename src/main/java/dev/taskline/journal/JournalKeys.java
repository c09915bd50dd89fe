package dev.taskline.journal;

import dev.taskline.model.KeyRecord;
import dev.taskline.model.SignedOut;
import dev.taskline.model.StoredKey;
import io.vertx.core.Future;
import io.vertx.sqlclient.Pool;
import io.vertx.sqlclient.Row;
import java.time.Clock;
import java.time.Duration;
import java.time.Instant;
import java.time.OffsetDateTime;
import java.time.ZoneOffset;
import java.util.ArrayList;
import java.util.Arrays;
import java.util.HashMap;
import java.util.List;
import java.util.Map;

/** The API keys issued through the API (migration 000007): stored by hash, revoked by time. */
public final class JournalKeys {

    private final Pool pool;
    private final Sql sql;
    private final Clock clock;
    private final Sql.Bound<Params.KeyInsert> keyInsert;
    private final Sql.Bound<Params.SessionRevoke> sessionRevoke;

    public JournalKeys(Pool pool, Clock clock) {
        this.pool = pool;
        this.sql = Sql.queries();
        this.clock = clock;
        this.keyInsert = sql.bound("key_insert", Params.KeyInsert.class);
        this.sessionRevoke = sql.bound("session_revoke", Params.SessionRevoke.class);
    }

    /** What became of a key to store. */
    public enum Insert {
        STORED,
        /** Its id (or hash) is taken. */
        TAKEN,
        /** The node has no key, and this one is no admin key: it would lock every administrator out. */
        NOT_ADMIN_FIRST
    }

    /** What became of a key to revoke. */
    public enum Revoke {
        REVOKED,
        /** No such live key. */
        UNKNOWN,
        /** The last live admin key, the config holding none: it stays. */
        LAST_ADMIN
    }

    /**
     * Stores a new key, unless the node has no key yet and this is no admin key. {@code configKeys}:
     * the config holds keys, so auth is on whatever the journal holds.
     */
    public Future<Insert> insert(StoredKey key, String createdBy, boolean configKeys) {
        return JournalFailures.guard(pool.preparedQuery(keyInsert.text())
                        .execute(keyInsert.bind(new Params.KeyInsert(
                                key.id(),
                                key.hash(),
                                key.tenant(),
                                key.scopes().toArray(new String[0]),
                                key.queues().toArray(new String[0]),
                                now(),
                                createdBy,
                                configKeys))))
                .map(rows -> {
                    Row row = rows.iterator().next();
                    if (!row.getBoolean("allowed")) {
                        return Insert.NOT_ADMIN_FIRST;
                    }
                    return row.getBoolean("inserted") ? Insert.STORED : Insert.TAKEN;
                });
    }

    /** Every key not revoked. */
    public Future<List<StoredKey>> live() {
        return JournalFailures.guard(pool.preparedQuery(sql.get("keys_live")).execute())
                .map(rows -> {
                    List<StoredKey> keys = new ArrayList<>();
                    for (Row row : rows) {
                        keys.add(new StoredKey(
                                row.getString("id"),
                                row.getString("hash"),
                                row.getString("tenant"),
                                Arrays.asList(row.getArrayOfStrings("scopes")),
                                Arrays.asList(row.getArrayOfStrings("queues"))));
                    }
                    return keys;
                });
    }

    /** Every key ever issued here, revoked ones with their time, oldest first. */
    public Future<List<KeyRecord>> all() {
        return JournalFailures.guard(pool.preparedQuery(sql.get("keys_all")).execute())
                .map(rows -> {
                    List<KeyRecord> keys = new ArrayList<>();
                    for (Row row : rows) {
                        keys.add(new KeyRecord(
                                row.getString("id"),
                                row.getString("tenant"),
                                Arrays.asList(row.getArrayOfStrings("scopes")),
                                Arrays.asList(row.getArrayOfStrings("queues")),
                                row.getOffsetDateTime("created_at").toInstant(),
                                row.getString("created_by"),
                                Rows.instant(row, "revoked_at"),
                                row.getString("revoked_by")));
                    }
                    return keys;
                });
    }

    /**
     * Revokes a key for {@code by} (a key id, or null), unless it is the last live admin key and
     * {@code configAdmin} is false (the config holds no admin key).
     */
    public Future<Revoke> revoke(String id, String by, boolean configAdmin) {
        Sql.Statement revoke = sql.statement("key_revoke");
        return JournalFailures.guard(pool.preparedQuery(revoke.text())
                        .execute(revoke.bind("id", id, "now", now(), "revoked_by", by, "config_admin", configAdmin)))
                .map(rows -> {
                    Row row = rows.iterator().next();
                    if (row.getBoolean("revoked")) {
                        return Revoke.REVOKED;
                    }
                    return row.getBoolean("last_admin") ? Revoke.LAST_ADMIN : Revoke.UNKNOWN;
                });
    }

    /**
     * Signs a dashboard session out on every node: its id's digest, until it would have expired. A key
     * holding {@code most} single sign-outs already signs out, with this one, every session it opened
     * before now: one row ({@link #floorDigest}, kept for {@code ttl}) in place of theirs.
     */
    public Future<Void> revokeSession(String digest, Instant expiresAt, String by, int most, Duration ttl) {
        OffsetDateTime now = now();
        return JournalFailures.guard(pool.preparedQuery(sessionRevoke.text())
                        .execute(sessionRevoke.bind(new Params.SessionRevoke(
                                digest,
                                Times.utc(expiresAt),
                                now,
                                by,
                                most,
                                by == null ? null : floorDigest(by),
                                now.plus(ttl)))))
                .mapEmpty();
    }

    /** The row standing for every session of a key signed out before a time: no session digest looks like it. */
    static String floorDigest(String keyId) {
        return "key:" + keyId;
    }

    /** The sign-outs whose sessions have not expired yet. */
    public Future<SignedOut> revokedSessions() {
        Sql.Statement live = sql.statement("session_revocations_live");
        return JournalFailures.guard(pool.preparedQuery(live.text()).execute(live.bind("now", now())))
                .map(rows -> {
                    Map<String, SignedOut.Single> digests = new HashMap<>();
                    Map<String, Instant> keysBefore = new HashMap<>();
                    for (Row row : rows) {
                        if (row.getBoolean("key_floor")) {
                            keysBefore.put(row.getString("revoked_by"), Rows.instant(row, "revoked_at"));
                        } else {
                            digests.put(
                                    row.getString("session_digest"),
                                    new SignedOut.Single(row.getString("revoked_by"), Rows.instant(row, "expires_at")));
                        }
                    }
                    return new SignedOut(digests, keysBefore);
                });
    }

    private OffsetDateTime now() {
        return clock.instant().atOffset(ZoneOffset.UTC);
    }
}
