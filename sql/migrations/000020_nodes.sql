-- 000020: many nodes as one. Each node journals itself in nodes (and heart-beats there), one node at
-- a time holds a lease of node_leases for the work one node alone should do, and the journal tells
-- the nodes that listen what another node must act on at once, through NOTIFY.
--
-- Liveness is read by the database's clock (now()), not a node's: nodes' clocks may differ, and a
-- node's row must be found expired by every other node alike.
CREATE TABLE nodes (
  id           text        PRIMARY KEY,
  version      text        NOT NULL,
  address      text,
  started_at   timestamptz NOT NULL,
  seen_at      timestamptz NOT NULL,
  -- Live while this is ahead of now(): each heartbeat moves it three heartbeats ahead.
  expires_at   timestamptz NOT NULL,
  -- Set by a clean stop; a killed node's row just expires.
  gone_at      timestamptz,
  -- Its queues' definitions (the part every node must agree on), canonical, and their hash.
  queues       jsonb       NOT NULL,
  queues_hash  text        NOT NULL,
  -- Raised by a node started with --take-over-config: nodes of an older epoch are being rolled out,
  -- and a starting node compares its definitions only with the newest epoch's.
  config_epoch bigint      NOT NULL,
  -- Streams open on the node: while none anywhere follows a task, no task event is announced.
  streams      int         NOT NULL DEFAULT 0
);

CREATE TABLE node_leases (
  name    text        PRIMARY KEY,
  node_id text        NOT NULL,
  until   timestamptz NOT NULL
);

-- Whether another node could be listening. A node alone on its journal pays nothing for NOTIFY
-- (it takes a lock held to the end of each commit that sends one, and serializes them).
CREATE FUNCTION taskline_peers() RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT count(*) > 1 FROM (SELECT 1 FROM nodes WHERE gone_at IS NULL AND expires_at > now() LIMIT 2) live
$$;

-- Whether a task event is worth announcing: peers, and a stream open somewhere.
CREATE FUNCTION taskline_followed() RETURNS boolean LANGUAGE sql STABLE AS $$
  SELECT taskline_peers() AND EXISTS (SELECT 1 FROM nodes WHERE gone_at IS NULL AND expires_at > now() AND streams > 0)
$$;

-- Payloads are hints (a queue's name at most): a node that hears one reads the journal. NOTIFY
-- folds equal notifications of one transaction into one.
--
-- The tasks table has one trigger, for progress alone (a statement that sets progress_message:
-- only the progress write does). What a node must hear of the other transitions (due work it could
-- start, a key's room freed, a task event a stream follows) the node that made them tells, once its
-- statement committed, and only when another node is there to hear (cluster.Cluster): a trigger on
-- every claim and finish cost a node alone a fifth of its drain rate (transition tables, and the
-- test of whether anyone listens, on each statement).
CREATE FUNCTION taskline_progress_written() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF taskline_followed() THEN
    PERFORM pg_notify('taskline_events', '');
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER tasks_progress_written AFTER UPDATE OF progress_message ON tasks
  FOR EACH STATEMENT EXECUTE FUNCTION taskline_progress_written();

CREATE FUNCTION taskline_announce() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF taskline_peers() THEN
    PERFORM pg_notify(TG_ARGV[0], '');
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER queue_controls_changed AFTER INSERT OR UPDATE OR DELETE ON queue_controls
  FOR EACH STATEMENT EXECUTE FUNCTION taskline_announce('taskline_controls');
CREATE TRIGGER api_keys_changed AFTER INSERT OR UPDATE OR DELETE ON api_keys
  FOR EACH STATEMENT EXECUTE FUNCTION taskline_announce('taskline_auth');
CREATE TRIGGER session_revocations_changed AFTER INSERT ON session_revocations
  FOR EACH STATEMENT EXECUTE FUNCTION taskline_announce('taskline_auth');
CREATE TRIGGER schedules_changed AFTER INSERT OR UPDATE OR DELETE ON schedules
  FOR EACH STATEMENT EXECUTE FUNCTION taskline_announce('taskline_schedules');
CREATE TRIGGER schedule_ticks_decided AFTER INSERT ON schedule_ticks
  FOR EACH STATEMENT EXECUTE FUNCTION taskline_announce('taskline_schedules');
