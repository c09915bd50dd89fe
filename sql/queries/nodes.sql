-- Named queries on nodes and node_leases (migration 000020): the node registry, the one node at a
-- time that does the journal's upkeep, and the wake-ups a node sends itself. Times of liveness are
-- the database's (now()), as the migration says why.

-- name: nodes_lock
-- Taken in the transaction of a node's registration: two nodes that start at once compare their
-- queues one after the other, never both against a registry without the other.
SELECT pg_advisory_xact_lock(hashtext('taskline.nodes'));

-- name: nodes_live
-- The live nodes, newest epoch first: those a starting node must agree with.
SELECT id, version, address, started_at, queues::text AS queues, queues_hash, config_epoch
  FROM nodes WHERE gone_at IS NULL AND expires_at > now()
 ORDER BY config_epoch DESC, started_at;

-- name: node_register
-- :id, :version, :address, :queues (JSON text), :queues_hash, :config_epoch, :expires_ms how long the
-- row lives without a heartbeat.
-- A node registering again (its row expired or was deleted) keeps its start time.
INSERT INTO nodes (id, version, address, started_at, seen_at, expires_at, queues, queues_hash, config_epoch)
VALUES (:id, :version, :address, now(), now(), now() + make_interval(secs => :expires_ms::bigint / 1000.0),
        :queues::text::jsonb, :queues_hash, :config_epoch)
ON CONFLICT (id) DO UPDATE
   SET seen_at = EXCLUDED.seen_at, expires_at = EXCLUDED.expires_at, gone_at = NULL, address = EXCLUDED.address,
       queues = EXCLUDED.queues, queues_hash = EXCLUDED.queues_hash, config_epoch = EXCLUDED.config_epoch;

-- name: node_heartbeat
-- :id, :expires_ms, :streams streams open on the node, :connections its journal connections open.
-- Keeps a live row live; no row when it is not (stopped, expired: a stall or an outage longer than
-- its life, or deleted as long gone): the node then registers again, through the check of its
-- queues' definitions. live: the live nodes, this one among them; followed: whether another live
-- node has streams open.
UPDATE nodes SET seen_at = now(), expires_at = now() + make_interval(secs => :expires_ms::bigint / 1000.0),
                 streams = :streams::int, connections = :connections::int
 WHERE id = :id AND gone_at IS NULL AND expires_at > now()
RETURNING id,
          1 + (SELECT count(*) FROM nodes o WHERE o.id <> :id AND o.gone_at IS NULL AND o.expires_at > now()) AS live,
          EXISTS (SELECT 1 FROM nodes o WHERE o.id <> :id AND o.gone_at IS NULL AND o.expires_at > now()
                                          AND o.streams > 0) AS followed;

-- name: node_address
-- :id, :address. The API's address, once it listens.
UPDATE nodes SET address = :address WHERE id = :id;

-- name: node_gone
-- :id. A clean stop: the node is listed as gone at once, and any lease it held is let go.
WITH gone AS (
  UPDATE nodes SET gone_at = now(), expires_at = now(), streams = 0, connections = 0 WHERE id = :id RETURNING id
)
DELETE FROM node_leases WHERE node_id = :id;

-- name: nodes_list
-- :gone_ms how long a node stays listed once gone (stopped, or silent past its expiry). Live first.
SELECT id, version, address, started_at, seen_at, expires_at, gone_at, queues_hash, config_epoch, streams,
       connections, gone_at IS NULL AND expires_at > now() AS live,
       (SELECT string_agg(l.name, ',' ORDER BY l.name) FROM node_leases l WHERE l.node_id = nodes.id AND l.until > now())
         AS leases,
       now() AS read_at
  FROM nodes
 WHERE COALESCE(gone_at, expires_at) > now() - make_interval(secs => :gone_ms::bigint / 1000.0)
 ORDER BY live DESC, started_at, id;

-- name: nodes_forget
-- :gone_ms. Deletes the rows of nodes gone longer than that.
DELETE FROM nodes WHERE COALESCE(gone_at, expires_at) <= now() - make_interval(secs => :gone_ms::bigint / 1000.0);

-- name: node_lease_take
-- :name, :node_id, :lease_ms. Takes or renews the lease: it is this node's when free, lapsed, or its
-- own already. A row when this node holds it now; none when another does, or when this node's own
-- row is not live (a heartbeat that was in flight as the node stopped must not take it back).
INSERT INTO node_leases (name, node_id, until)
SELECT :name, :node_id, now() + make_interval(secs => :lease_ms::bigint / 1000.0)
 WHERE EXISTS (SELECT 1 FROM nodes WHERE id = :node_id AND gone_at IS NULL AND expires_at > now())
ON CONFLICT (name) DO UPDATE SET node_id = EXCLUDED.node_id, until = EXCLUDED.until
 WHERE node_leases.node_id = EXCLUDED.node_id OR node_leases.until <= now()
RETURNING node_id;

-- name: notify
-- :channel, :payload. What a node tells the others once a statement of its own committed: due work
-- it cannot start (taskline_due, the queue), room freed under a queue's keys (taskline_keys, the
-- queue), task events a stream elsewhere follows (taskline_events), a stream opened here
-- (taskline_nodes). The node sends it only when another is live.
SELECT pg_notify(:channel, :payload);
