-- 000018: the flows' indexes, made to cost their tasks' transitions nothing.
--
-- A flow task's key is unique in its flow. As a unique index on tasks (000017), each of a flow
-- task's transitions wrote an entry to it, for a key that never changes: updates that change the
-- state are never HOT (the state is in partial indexes), so every index with an entry for the row
-- gets a new one. A chord of 10,000 paid a fifth more per claim and finish than a batch did. The
-- keys live in a table of their own instead, written once, with the flow and with what a task
-- spawns into it; only the uniqueness is kept there (no statement looks a task up by its key).
CREATE TABLE flow_keys (
  flow_id uuid NOT NULL,
  key     text NOT NULL,
  PRIMARY KEY (flow_id, key)
);
INSERT INTO flow_keys (flow_id, key) SELECT flow_id, flow_key FROM tasks WHERE flow_id IS NOT NULL;
DROP INDEX tasks_flow_key;

-- A tenant's blocked flow tasks count against each queue's tenantLimit, as its waiting and running
-- ones do. The blocked tasks are counted every few seconds (flows.maxBlocked reads the same count);
-- keyed by queue and tenant, the index answers both the total and the split from itself.
DROP INDEX tasks_blocked;
CREATE INDEX tasks_blocked ON tasks (queue, tenant) WHERE state = 'blocked';

-- flow_settle (000017) read the ended parents' edges and their blocked children as joins, which the
-- planner, knowing a round's size, turned into a hash of every edge and a scan of every blocked task:
-- 21 ms for a round of 1,600 ends at 70,000 edges, growing with the journal; and it read the children
-- it made pending through the index of every pending task. The same function, each read a probe of
-- a key.
CREATE OR REPLACE FUNCTION flow_settle(ended uuid[], ended_flows uuid[], outcomes text[], settled_at timestamptz)
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
    -- Both reads go by key, one probe a row, however many rows the planner expects (OFFSET 0 keeps
    -- each lateral probe from being flattened into a join): with the round's ids known, it judged a
    -- hash of every edge cheaper than 1,600 probes of the primary key, and a scan of every blocked
    -- task as cheap as one look-up, which they are not once the journal holds many of either.
    WITH ends AS (
      SELECT e.id, e.state FROM unnest(round_ids, round_states) AS e(id, state)
    ), hits AS MATERIALIZED (
      SELECT c.child_id, 'blocked'::text AS held_state,
             count(*) FILTER (WHERE ends.state = 'succeeded')::int AS ok,
             count(*) FILTER (WHERE ends.state <> 'succeeded')::int AS bad
        FROM ends CROSS JOIN LATERAL (SELECT g.child_id FROM task_edges g WHERE g.parent_id = ends.id OFFSET 0) c
       GROUP BY c.child_id, held_state
       ORDER BY c.child_id
    ), locked AS (
      -- Locked in the order of their ids (hits is sorted), so that two nodes settling the same
      -- children wait for each other rather than deadlock. The state expected comes from the row,
      -- not as a literal, for the reason tasks.sql gives: a literal lets the planner read every
      -- blocked task through tasks_blocked for each probe.
      SELECT t.id, t.join_mode, t.parents_left, h.ok, h.bad
        FROM hits h CROSS JOIN LATERAL (
               SELECT x.id, x.join_mode, x.parents_left FROM tasks x
                WHERE x.id = h.child_id AND x.state = h.held_state OFFSET 0 FOR UPDATE) t
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
    -- By key alone: "state = 'pending'" here had the planner read every pending task through
    -- tasks_pending_order, and the ready ones are pending, locked since this function moved them.
    FROM tasks t WHERE t.id = ANY (ready)
  UNION ALL
  SELECT 'cancelled'::text, g.id, 'cancelled'::text, NULL::jsonb
    FROM unnest(gone) AS g(id);
END;
$$;
