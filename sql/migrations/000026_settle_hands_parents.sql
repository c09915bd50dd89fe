-- 000026: a child made ready is handed its parents' results with it, when they are few and light.
--
-- A chain's step, made pending by its parent's end, read its parent's result in a statement of its
-- own once claimed (flow_parents), between the claim and its handler: a round trip of every hand-off,
-- a millisecond more with PostgreSQL a millisecond away. flow_settle reads them as it makes the child
-- ready (the same values and weights flow_parents gives) and returns them in the ready row's task,
-- under "parents"; the node hands them to the child's first attempt on this node. A node of the
-- release before ignores the key. Only the ready rows' select changes.
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
                            'join_mode', t.join_mode, 'flow_key', t.flow_key, 'parents', h.parents)
    -- By key alone: "state = 'pending'" here had the planner read every pending task through
    -- tasks_pending_order, and the ready ones are pending, locked since this function moved them.
    FROM tasks t
    LEFT JOIN LATERAL (
      -- What a child of few, light parents will read as it starts, handed over with it (null past
      -- 8 parents or 2,048 bytes: it reads them then, as flow_parents does). A chain's step so
      -- starts without a round trip for its parent's result. At most 9 edges are read, however
      -- many parents the child has. The parent that ended in the calling statement is seen as it
      -- ended: a volatile function sees what its calling statement wrote.
      SELECT CASE WHEN count(*) <= 8 AND COALESCE(sum(p.bytes), 0) <= 2048
                  THEN jsonb_build_object('count', count(*), 'bytes', COALESCE(sum(p.bytes), 0),
                                          'values', json_object_agg(p.flow_key, p.value)::text,
                                          'states', json_object_agg(p.flow_key, p.state)::text) END AS parents
        FROM (SELECT x.flow_key, x.state, CASE WHEN x.state = 'succeeded' THEN x.result ELSE x.error END AS value,
                     COALESCE(octet_length(x.result::text), 0) + COALESCE(octet_length(x.error::text), 0) AS bytes
                FROM task_edges e JOIN tasks x ON x.id = e.parent_id
               WHERE e.child_id = t.id
               LIMIT 9) p
    ) h ON true
   WHERE t.id = ANY (ready)
  UNION ALL
  SELECT 'cancelled'::text, g.id, 'cancelled'::text, NULL::jsonb
    FROM unnest(gone) AS g(id);
END;
$$;
