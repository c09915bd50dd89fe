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
