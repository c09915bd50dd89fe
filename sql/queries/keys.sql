-- name: key_insert
-- $1 id, $2 hash, $3 tenant, $4 scopes, $5 queues, $6 now, $7 the key that made it. No row: the id is taken.
INSERT INTO api_keys (id, hash, tenant, scopes, queues, created_at, created_by)
VALUES ($1, $2, $3, $4, $5, $6, $7)
ON CONFLICT DO NOTHING
RETURNING id;

-- name: keys_live
SELECT id, hash, tenant, scopes, queues FROM api_keys WHERE revoked_at IS NULL;

-- name: keys_all
SELECT id, tenant, scopes, queues, created_at, created_by, revoked_at, revoked_by FROM api_keys ORDER BY created_at, id;

-- name: key_revoke
-- $1 id, $2 now, $3 the key that revokes it. No row: no such key, or revoked already.
UPDATE api_keys SET revoked_at = $2, revoked_by = $3 WHERE id = $1 AND revoked_at IS NULL RETURNING id;
