-- 000007: API keys issued through the API (POST /api/keys), beside those of the config. Only the
-- SHA-256 of a secret is kept; a key is revoked by time, not deleted, so that its id stays taken
-- and the history that names it stays readable. Who issued and who revoked it are kept (key ids).
-- Every node reads the live ones every second.
CREATE TABLE api_keys (
  id         text PRIMARY KEY,
  hash       text NOT NULL UNIQUE,
  tenant     text,
  scopes     text[] NOT NULL,
  queues     text[] NOT NULL,
  created_at timestamptz NOT NULL,
  created_by text,
  revoked_at timestamptz,
  revoked_by text
);
