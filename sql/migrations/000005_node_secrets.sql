-- 000005: secrets the nodes of one journal share. 'lease-token' signs the lease tokens handed to
-- remote workers, so that a token cannot be forged into another task's or version's, and any node
-- can check one that another node issued. The first node to start writes it; the others read it.
CREATE TABLE node_secrets (
  name       text PRIMARY KEY,
  secret     bytea NOT NULL,
  created_at timestamptz NOT NULL
);
