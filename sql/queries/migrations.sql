-- Named queries of the migrator: the table that records which migrations (sql/migrations) were
-- applied, and the lock that keeps two nodes starting at once from applying one twice.

-- name: migrations_lock
-- :key the migrator's advisory lock, held until the migration's transaction ends.
SELECT pg_advisory_xact_lock(:key);

-- name: migrations_table_present
SELECT to_regclass('taskline_migrations') IS NOT NULL AS present;

-- name: migrations_table_create
CREATE TABLE taskline_migrations (version integer PRIMARY KEY, applied_at timestamptz NOT NULL DEFAULT now());

-- name: migration_applied
-- :version a migration's number: a row when it was applied.
SELECT 1 FROM taskline_migrations WHERE version = :version;

-- name: migration_unbounded
-- The node's statement and lock timeouts bound its own statements; a migration may rewrite a big
-- table, and waits for another node's migration on the lock above.
SET LOCAL statement_timeout = 0; SET LOCAL lock_timeout = 0;

-- name: migration_notices_quiet
-- The client logs each server NOTICE as a warning; a migration's notices (an index renamed as it
-- becomes a key, say) are planned, so only warnings and worse reach it.
SET LOCAL client_min_messages = warning;

-- name: migration_record
INSERT INTO taskline_migrations (version) VALUES (:version);
