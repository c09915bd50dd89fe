-- name: key_insert
-- :id, :hash, :tenant, :scopes, :queues, :now, :created_by the key that made it, :config_keys whether the
-- config holds keys. On a node with no key (none in the config, none live here) only an admin key is
-- made: the first key turns auth on, and a node whose keys are all of other scopes has nobody left
-- who may issue or revoke one. allowed false: refused so; inserted false: the id (or hash) is taken.
WITH gate AS (
  SELECT :config_keys::boolean
         OR 'admin' = ANY (:scopes::text[])
         OR EXISTS (SELECT 1 FROM api_keys WHERE revoked_at IS NULL) AS allowed
), inserted AS (
  INSERT INTO api_keys (id, hash, tenant, scopes, queues, created_at, created_by)
  SELECT :id::text, :hash::text, :tenant::text, :scopes::text[], :queues::text[], :now::timestamptz,
         :created_by::text
    FROM gate
   WHERE allowed
  ON CONFLICT DO NOTHING
  RETURNING id
)
SELECT allowed, EXISTS (SELECT 1 FROM inserted) AS inserted FROM gate;

-- name: keys_live
SELECT id, hash, tenant, scopes, queues FROM api_keys WHERE revoked_at IS NULL;

-- name: keys_all
SELECT id, tenant, scopes, queues, created_at, created_by, revoked_at, revoked_by FROM api_keys ORDER BY created_at, id;

-- name: key_revoke
-- :id, :now, :revoked_by the key that revokes it, :config_admin whether the config holds an admin key.
-- The last live admin key is kept when the config holds none: auth would stay on with no key that may
-- issue or revoke one. The live admin keys are locked in id order before that is decided, so that two
-- admins revoking each other's keys at once cannot each see the other's still live: the second waits
-- for the first and then finds its key gone. revoked: done; last_admin: refused so; neither: no such
-- live key.
WITH admins AS (
  SELECT id FROM api_keys WHERE revoked_at IS NULL AND 'admin' = ANY (scopes) ORDER BY id FOR UPDATE
), target AS (
  SELECT NOT ('admin' = ANY (scopes))
         OR :config_admin::boolean
         OR EXISTS (SELECT 1 FROM admins WHERE admins.id <> :id) AS allowed
    FROM api_keys
   WHERE id = :id AND revoked_at IS NULL
), revoked AS (
  UPDATE api_keys SET revoked_at = :now, revoked_by = :revoked_by
   WHERE id = :id AND revoked_at IS NULL AND (SELECT allowed FROM target)
  RETURNING id
)
SELECT EXISTS (SELECT 1 FROM revoked) AS revoked, EXISTS (SELECT 1 FROM target WHERE NOT allowed) AS last_admin;

-- name: session_revoke
-- :digest the signed-out session's id digest, :expires_at when it would have expired, :now, :revoked_by
-- the key it was opened with, :most single sign-outs a key may hold, :floor_digest the row that stands
-- for all of them and :floor_expires when the last session it covers would have expired. Signing out
-- twice keeps the first row. A key at its bound signs out, with this one, every session it opened
-- before :now: the floor row, and the single rows it now covers are deleted (not this one, which the
-- statement's snapshot does not see).
WITH live AS (
  SELECT count(*) AS n FROM session_revocations
   WHERE revoked_by = :revoked_by AND NOT key_floor AND expires_at > :now
), floor AS (
  INSERT INTO session_revocations (session_digest, expires_at, revoked_at, revoked_by, key_floor)
  SELECT :floor_digest, :floor_expires, :now, :revoked_by, true FROM live WHERE n >= :most
  ON CONFLICT (session_digest) DO UPDATE SET revoked_at = EXCLUDED.revoked_at, expires_at = EXCLUDED.expires_at
  RETURNING 1
), covered AS (
  DELETE FROM session_revocations
   WHERE revoked_by = :revoked_by AND NOT key_floor AND EXISTS (SELECT 1 FROM floor)
)
INSERT INTO session_revocations (session_digest, expires_at, revoked_at, revoked_by)
VALUES (:digest, :expires_at, :now, :revoked_by)
ON CONFLICT (session_digest) DO NOTHING;

-- name: session_revocations_live
-- :now: the revocations of sessions that have not expired yet, which every node holds in memory; a
-- key's floor names the key, and when its sessions opened before it were signed out.
SELECT session_digest, expires_at, key_floor, revoked_by, revoked_at
  FROM session_revocations WHERE expires_at > :now;

-- name: delete_expired_session_revocations
-- :now, :most rows: those whose session would have expired by now.
DELETE FROM session_revocations
 WHERE ctid IN (SELECT ctid FROM session_revocations WHERE expires_at <= :now LIMIT :most);
