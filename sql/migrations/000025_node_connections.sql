-- 000025: each node's journal connections open at its last heartbeat (its pools and its listening
-- connection), for the registry's list: what the nodes on one PostgreSQL take of its max_connections.
-- A column with a constant default: no rewrite of the table.
ALTER TABLE nodes ADD COLUMN connections int NOT NULL DEFAULT 0;
