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

-- Payloads are hints (a queue's name): a node that hears one reads the journal. NOTIFY folds equal
-- notifications of one transaction into one, so a statement of many tasks sends one per queue.
-- A submission announces no due work here: the node that takes it in starts it, or, its slots
-- busy, tells the others itself (notify_due), so that nodes with free slots do not all read in
-- work its own node is about to start.
CREATE FUNCTION taskline_tasks_inserted() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF taskline_followed() THEN
    PERFORM pg_notify('taskline_events', '');
  END IF;
  RETURN NULL;
END
$$;

-- A task that ran and is back to pending and awake (released at a node's shutdown, its lease lapsed,
-- a retry or a snooze: these last due later, and a node that hears of them early reads nothing) is
-- due somewhere, with no node holding it; a keyed task that left running freed room under its key.
-- A flow child made ready (never run: version 0) is offered to the node that ended its parent,
-- which tells the others if it cannot start it.
CREATE FUNCTION taskline_tasks_updated() RETURNS trigger LANGUAGE plpgsql AS $$
BEGIN
  IF taskline_peers() THEN
    PERFORM pg_notify('taskline_due', q.queue)
       FROM (SELECT DISTINCT queue FROM updated WHERE state = 'pending' AND wait IS NULL AND lease_version > 0) q;
    PERFORM pg_notify('taskline_keys', q.queue)
       FROM (SELECT DISTINCT queue FROM updated WHERE concurrency_key IS NOT NULL AND state <> 'running') q;
    IF taskline_followed() THEN
      PERFORM pg_notify('taskline_events', '');
    END IF;
  END IF;
  RETURN NULL;
END
$$;

CREATE TRIGGER tasks_inserted AFTER INSERT ON tasks
  FOR EACH STATEMENT EXECUTE FUNCTION taskline_tasks_inserted();
CREATE TRIGGER tasks_updated AFTER UPDATE ON tasks
  REFERENCING NEW TABLE AS updated FOR EACH STATEMENT EXECUTE FUNCTION taskline_tasks_updated();

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
