-- 000017: flows. A flow is a graph of tasks journaled in one transaction: a task with parents
-- ("dependsOn") waits 'blocked' until they have done what its join waits for, and leaves that state
-- in the transaction that commits its last parent's end, never later (flow_settle below, called by
-- every statement that ends a flow task).
--
-- What a child waits for is a counter on its own row, not a scan of its siblings, so a parent's end
-- costs the same whatever the fan-in: parents_left counts, by join,
--   all      parents not yet succeeded (any other end cancels the child: parent_failed),
--   settled  parents not yet ended, whatever the end,
--   any      parents not yet ended other than succeeded (the first success makes it pending; it is
--            cancelled when none is left that could succeed).
CREATE TABLE flows (
  id            uuid        PRIMARY KEY,
  name          text,
  tenant        text,
  size          integer     NOT NULL CHECK (size >= 1),
  -- Tasks not yet ended, and how the ended ones ended: the flow's state without reading its tasks.
  unfinished    integer     NOT NULL CHECK (unfinished >= 0),
  failed        integer     NOT NULL DEFAULT 0,   -- ended failed or expired
  cancelled     integer     NOT NULL DEFAULT 0,
  state         text        NOT NULL,
  -- As for batches (000004): the flow's tasks lie in this id range, found by the primary key. A
  -- spawned task widens it.
  first_task_id uuid        NOT NULL,
  last_task_id  uuid        NOT NULL,
  created_at    timestamptz NOT NULL,
  finished_at   timestamptz,
  CONSTRAINT flows_state_known CHECK (state IN ('running', 'succeeded', 'failed', 'cancelled'))
);

CREATE INDEX flows_by_tenant ON flows (tenant, id) WHERE tenant IS NOT NULL;

-- flow_key: the task's name in its flow; join_mode and parents_left as above (null for a task of no
-- flow, and for a flow's roots); start_within_ms: a blocked task's startWithinMs, counted from when
-- it becomes pending (its start_by is set then).
ALTER TABLE tasks ADD COLUMN flow_id uuid, ADD COLUMN flow_key text, ADD COLUMN join_mode text,
                  ADD COLUMN parents_left integer, ADD COLUMN start_within_ms bigint;

ALTER TABLE tasks DROP CONSTRAINT tasks_state_known;
ALTER TABLE tasks ADD CONSTRAINT tasks_state_known
  CHECK (state IN ('blocked', 'pending', 'running', 'succeeded', 'failed', 'cancelled', 'expired'));

-- Blocked tasks, counted against flows.maxBlocked. Only they have an entry: other tasks' transitions
-- cost it nothing (a blocked task's own leave a dead entry until vacuum).
CREATE INDEX tasks_blocked ON tasks (id) WHERE state = 'blocked';

-- A key names one task of its flow: a task that spawns more cannot give one twice. Only flow tasks
-- have an entry.
CREATE UNIQUE INDEX tasks_flow_key ON tasks (flow_id, flow_key) WHERE flow_id IS NOT NULL;

-- Who waits for whom. By parent: the children a parent's end settles. By child: the parents whose
-- results a child reads when it starts.
CREATE TABLE task_edges (
  parent_id uuid NOT NULL,
  child_id  uuid NOT NULL,
  PRIMARY KEY (parent_id, child_id)
);
CREATE INDEX task_edges_by_child ON task_edges (child_id, parent_id);

-- Settles the children of flow tasks that just ended: ended[i] (of flow ended_flows[i]) ended in
-- outcomes[i] ('succeeded', 'failed', 'cancelled' or 'expired'), at settled_at. Children that can now run
-- become pending, due after their own delay counted from now; children whose join can no longer be
-- met end cancelled (parent_failed), and their own children are settled in turn, a level a round,
-- never by recursion (a chain of 10,000 cancelled at its head is 10,000 rounds, not a deep stack).
-- Then each flow's counters and, once nothing of it is left, its final state.
--
-- Takes its arguments rather than reading the ended rows: it runs inside the statement that ended
-- them, whose changes it does not see. It only writes rows that statement did not touch (blocked
-- children, flows). Locks are taken in one order: children by id (each round), then flows by id, so
-- that two nodes settling the same child at once wait for each other rather than deadlock.
--
-- Answers the tasks that became pending (kind 'ready', with what a queue needs to hold them as one
-- jsonb, so that a statement ending tasks returns four narrow columns, not twenty), the
-- ones it cancelled (kind 'cancelled') and the flows that ended (kind 'flow', with their state).
CREATE FUNCTION flow_settle(ended uuid[], ended_flows uuid[], outcomes text[], settled_at timestamptz)
RETURNS TABLE (kind text, id uuid, state text, task jsonb)
LANGUAGE plpgsql AS $$
DECLARE
  round_ids    uuid[] := ended;
  round_states text[] := outcomes;
  all_flows    uuid[] := ended_flows;
  all_states   text[] := outcomes;
  ready        uuid[] := '{}';
  gone         uuid[] := '{}';
  next_ids     uuid[];
  next_flows   uuid[];
  new_ready    uuid[];
BEGIN
  IF ended IS NULL OR cardinality(ended) = 0 THEN
    RETURN;
  END IF;
  LOOP
    WITH ends AS (
      SELECT e.id, e.state FROM unnest(round_ids, round_states) AS e(id, state)
    ), hits AS (
      SELECT g.child_id,
             count(*) FILTER (WHERE ends.state = 'succeeded')::int AS ok,
             count(*) FILTER (WHERE ends.state <> 'succeeded')::int AS bad
        FROM ends JOIN task_edges g ON g.parent_id = ends.id
       GROUP BY g.child_id
    ), locked AS (
      SELECT t.id, t.join_mode, t.parents_left, h.ok, h.bad
        FROM tasks t JOIN hits h ON h.child_id = t.id
       WHERE t.state = 'blocked'
       ORDER BY t.id
         FOR UPDATE OF t
    ), decided AS (
      SELECT l.id,
             CASE l.join_mode
               WHEN 'settled' THEN CASE WHEN l.parents_left - l.ok - l.bad <= 0 THEN 'pending' ELSE 'blocked' END
               WHEN 'any' THEN CASE WHEN l.ok > 0 THEN 'pending'
                                    WHEN l.parents_left - l.bad <= 0 THEN 'cancelled' ELSE 'blocked' END
               ELSE CASE WHEN l.bad > 0 THEN 'cancelled'
                         WHEN l.parents_left - l.ok <= 0 THEN 'pending' ELSE 'blocked' END
             END AS to_state,
             l.parents_left - CASE l.join_mode WHEN 'settled' THEN l.ok + l.bad WHEN 'any' THEN l.bad ELSE l.ok END
               AS left_after
        FROM locked l
    ), moved AS (
      UPDATE tasks t
         SET state = d.to_state,
             parents_left = GREATEST(d.left_after, 0),
             -- A delay counts from now. (A task's run_at may be a hair before its created_at, the
             -- statement's time, when admission read the clock first: no delay, not a negative one.)
             run_at = CASE WHEN d.to_state = 'pending'
                           THEN settled_at + GREATEST(t.run_at - t.created_at, interval '0') ELSE t.run_at END,
             start_by = CASE WHEN d.to_state = 'pending' AND t.start_within_ms IS NOT NULL
                             THEN settled_at + GREATEST(t.run_at - t.created_at, interval '0')
                                  + t.start_within_ms * interval '1 millisecond'
                             ELSE t.start_by END,
             lease_version = CASE WHEN d.to_state = 'cancelled' THEN t.lease_version + 1 ELSE t.lease_version END,
             finished_at = CASE WHEN d.to_state = 'cancelled' THEN settled_at END,
             updated_at = settled_at
        FROM decided d
       WHERE t.id = d.id
      RETURNING t.id, t.state, t.flow_id, t.lease_version, t.attempt
    ), ev AS (
      INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at)
      SELECT m.id, 'blocked', m.state, CASE WHEN m.state = 'pending' THEN 'unblocked' ELSE 'parent_failed' END,
             NULL, m.lease_version, m.attempt, settled_at
        FROM moved m
       WHERE m.state <> 'blocked'
    )
    SELECT array_agg(m.id) FILTER (WHERE m.state = 'cancelled'),
           array_agg(m.flow_id) FILTER (WHERE m.state = 'cancelled'),
           array_agg(m.id) FILTER (WHERE m.state = 'pending')
      INTO next_ids, next_flows, new_ready
      FROM moved m;

    IF new_ready IS NOT NULL THEN
      ready := ready || new_ready;
    END IF;
    EXIT WHEN next_ids IS NULL;
    gone := gone || next_ids;
    round_ids := next_ids;
    round_states := array_fill('cancelled'::text, ARRAY[cardinality(next_ids)]);
    all_flows := all_flows || next_flows;
    all_states := all_states || round_states;
  END LOOP;

  PERFORM 1 FROM flows f WHERE f.id = ANY (all_flows) ORDER BY f.id FOR UPDATE;
  RETURN QUERY
  WITH per_flow AS (
    SELECT e.flow_id, count(*)::int AS n,
           count(*) FILTER (WHERE e.state IN ('failed', 'expired'))::int AS failed,
           count(*) FILTER (WHERE e.state = 'cancelled')::int AS cancelled
      FROM unnest(all_flows, all_states) AS e(flow_id, state)
     GROUP BY e.flow_id
  ), counted AS (
    UPDATE flows f
       SET unfinished = GREATEST(f.unfinished - p.n, 0),
           failed = f.failed + p.failed,
           cancelled = f.cancelled + p.cancelled,
           state = CASE WHEN f.unfinished - p.n > 0 THEN f.state
                        WHEN f.failed + p.failed > 0 THEN 'failed'
                        WHEN f.cancelled + p.cancelled > 0 THEN 'cancelled'
                        ELSE 'succeeded' END,
           finished_at = CASE WHEN f.unfinished - p.n > 0 THEN f.finished_at ELSE settled_at END
      FROM per_flow p
     WHERE f.id = p.flow_id
    RETURNING f.id, f.state, f.unfinished
  )
  SELECT 'flow'::text, c.id, c.state, NULL::jsonb
    FROM counted c WHERE c.unfinished = 0
  UNION ALL
  SELECT 'ready'::text, t.id, t.state,
         jsonb_build_object('queue', t.queue, 'type', t.type, 'payload', t.payload::text, 'priority', t.priority,
                            'lease_version', t.lease_version, 'attempt', t.attempt, 'max_attempts', t.max_attempts,
                            'timeout_ms', t.timeout_ms, 'run_at', t.run_at, 'tenant', t.tenant,
                            'concurrency_key', t.concurrency_key, 'start_by', t.start_by, 'flow_id', t.flow_id,
                            'join_mode', t.join_mode, 'flow_key', t.flow_key)
    FROM tasks t WHERE t.id = ANY (ready) AND t.state = 'pending'
  UNION ALL
  SELECT 'cancelled'::text, g.id, 'cancelled'::text, NULL::jsonb
    FROM unnest(gone) AS g(id);
END;
$$;
