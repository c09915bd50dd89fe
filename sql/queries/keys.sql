-- name: key_insert
-- :id, :hash, :tenant, :scopes, :queues, :now, :created_by the key that made it. No row: the id is
-- taken.
INSERT INTO api_keys (id, hash, tenant, scopes, queues, created_at, created_by)
VALUES (:id, :hash, :tenant, :scopes, :queues, :now, :created_by)
ON CONFLICT DO NOTHING
RETURNING id;

-- name: keys_live
SELECT id, hash, tenant, scopes, queues FROM api_keys WHERE revoked_at IS NULL;

-- name: keys_all
SELECT id, tenant, scopes, queues, created_at, created_by, revoked_at, revoked_by FROM api_keys ORDER BY created_at, id;

-- name: key_revoke
-- :id, :now, :revoked_by the key that revokes it. No row: no such key, or revoked already.
UPDATE api_keys SET revoked_at = :now, revoked_by = :revoked_by WHERE id = :id AND revoked_at IS NULL RETURNING id;

-- name: session_revoke
-- :digest the signed-out session's id digest, :expires_at when it would have expired, :now, :revoked_by
-- the key it was opened with. Signing out twice keeps the first row.
INSERT INTO session_revocations (session_digest, expires_at, revoked_at, revoked_by)
VALUES (:digest, :expires_at, :now, :revoked_by)
ON CONFLICT (session_digest) DO NOTHING;

-- name: session_revocations_live
-- :now: the revocations of sessions that have not expired yet, which every node holds in memory.
SELECT session_digest, expires_at FROM session_revocations WHERE expires_at > :now;

-- name: delete_expired_session_revocations
-- :now, :most rows: those whose session would have expired by now.
DELETE FROM session_revocations
 WHERE ctid IN (SELECT ctid FROM session_revocations WHERE expires_at <= :now LIMIT :most);
