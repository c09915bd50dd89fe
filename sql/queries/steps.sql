-- Named queries for durable steps (migration 000019): steps journaled by name, suspended attempts,
-- signals and events, and the waker. Each block starts with "-- name:". Writes made for an
-- attempt are fenced as finish is: they land only while state, worker and version match and the
-- lease is live, the row share-locked so that a takeover cannot commit under them. Times inside
-- JSON are written as the API writes them: UTC, ending in Z.

-- name: step_write
-- :ids, :lease_versions, :worker_ids, :names, :results (JSON text), :now, :most steps a task may
-- have. Journals steps the handlers ran, with a step_completed event each. A step already there
-- keeps its first result: the answer gives the one kept, and whether this write made it; a new
-- step of a task that has :most already is not written, and answers full. (Steps of one task
-- written in the same statement are counted against those before it only: a group may pass the
-- bound by the few it holds.) A fenced write answers no row.
WITH req AS MATERIALIZED (
  SELECT r.*, :now::timestamptz AS at
    FROM unnest(:ids::uuid[], :lease_versions::bigint[], :worker_ids::text[], :names::text[], :results::text[])
         AS r(id, lease_version, worker_id, name, result)
), held AS (
  SELECT req.*, t.attempt FROM req JOIN tasks t ON t.id = req.id
   WHERE t.state = 'running' AND t.worker_id = req.worker_id AND t.lease_version = req.lease_version
     AND t.lease_expires_at > req.at
     FOR SHARE OF t
), ins AS (
  INSERT INTO task_steps (task_id, name, done, result, attempt, at)
  SELECT id, name, true, result::jsonb, attempt, at FROM held
   WHERE (SELECT count(*) FROM task_steps s WHERE s.task_id = held.id) < :most
  ON CONFLICT (task_id, name) DO NOTHING
  RETURNING task_id, name
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail)
  SELECT h.id, 'running', 'running', 'step_completed', h.worker_id, h.lease_version, h.attempt, :now,
         jsonb_build_object('step', h.name)
    FROM held h JOIN ins ON ins.task_id = h.id AND ins.name = h.name
)
SELECT h.id, h.name, ins.task_id IS NOT NULL AS first, ins.task_id IS NULL AND s.task_id IS NULL AS full,
       CASE WHEN ins.task_id IS NOT NULL THEN h.result ELSE s.result::text END AS result
  FROM held h
  LEFT JOIN ins ON ins.task_id = h.id AND ins.name = h.name
  LEFT JOIN task_steps s ON s.task_id = h.id AND s.name = h.name;

-- name: steps_load
-- :ids, :lease_versions, :worker_ids, :now. What an attempt of a durable task starts from: first
-- each open wait step that can end now ends (a buffered signal or delivered event of its name is
-- taken, oldest first; a sleep whose time came, or a wait whose timeout passed, is done), then
-- every done step is answered in the order reached, one row per step (a task with none answers
-- one row with a null name), with whether the task is compensating. Fenced: a task whose lease
-- was lost answers nothing.
WITH req AS MATERIALIZED (
  SELECT r.*, :now::timestamptz AS at
    FROM unnest(:ids::uuid[], :lease_versions::bigint[], :worker_ids::text[]) AS r(id, lease_version, worker_id)
), held AS MATERIALIZED (
  SELECT t.id, t.compensating, t.attempt, req.worker_id, req.lease_version FROM req JOIN tasks t ON t.id = req.id
   WHERE t.state = 'running' AND t.worker_id = req.worker_id AND t.lease_version = req.lease_version
     AND t.lease_expires_at > req.at
     FOR SHARE OF t
), open AS MATERIALIZED (
  SELECT s.task_id, s.name, s.until, s.wait, h.attempt, h.worker_id, h.lease_version
    FROM held h JOIN task_steps s ON s.task_id = h.id
   WHERE NOT s.done
), take AS MATERIALIZED (
  SELECT o.task_id, o.name, g.id AS signal_id, g.kind, g.name AS signal, g.payload, g.at
    FROM open o
    CROSS JOIN LATERAL (SELECT * FROM task_signals g
                         WHERE g.task_id = o.task_id AND g.taken_by IS NULL
                           AND g.kind = o.wait->>'kind' AND g.name = o.wait->>'name'
                         ORDER BY g.id LIMIT 1) g
), taken AS (
  UPDATE task_signals g SET taken_by = take.name FROM take WHERE g.id = take.signal_id
), ended AS (
  UPDATE task_steps s
     SET done = true, at = :now, attempt = o.attempt,
         result = CASE WHEN tk.kind = 'signal'
                         THEN jsonb_build_object('signal', tk.signal, 'payload', tk.payload,
                                                 'at', to_char(tk.at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
                       WHEN tk.kind = 'event' THEN jsonb_build_object('event', tk.payload)
                       WHEN o.wait->>'kind' = 'sleep'
                         THEN jsonb_build_object('until', to_char(o.until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
                       ELSE '{"timedOut": true}'::jsonb END
    FROM open o LEFT JOIN take tk ON tk.task_id = o.task_id AND tk.name = o.name
   WHERE s.task_id = o.task_id AND s.name = o.name
     AND (tk.signal_id IS NOT NULL OR o.until <= :now)
  RETURNING s.task_id, s.name, s.position, s.result, o.worker_id, o.lease_version, o.attempt
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail)
  SELECT task_id, 'running', 'running', 'step_completed', worker_id, lease_version, attempt, :now,
         jsonb_build_object('step', name)
    FROM ended
), steps AS (
  SELECT s.task_id, s.name, s.position, s.result FROM task_steps s
   WHERE s.task_id = ANY (ARRAY(SELECT id FROM held)) AND s.done
  UNION ALL
  SELECT task_id, name, position, result FROM ended
)
SELECT h.id, h.compensating, steps.name, steps.result::text AS result
  FROM held h LEFT JOIN steps ON steps.task_id = h.id
 ORDER BY h.id, steps.position;

-- name: suspend_open
-- :id, :lease_version, :worker_id, :step, :wait_for the wait (JSON: kind, name, field, value), :until (null:
-- no timeout), :now. The first half of ending an attempt suspended, fenced: opens the wait's step
-- with its deadline (a step already open keeps its first one), files an event wait's field for
-- the events to look up, hands the task any event it waits for that came since its attempt was
-- claimed, and puts the wait on the task's row. Answers the step's deadline and whether the task
-- may run again at once (the step is done, its time came, or what it waits for is there); then
-- finish ends the attempt, pending, due then (Journal.suspend).
WITH held AS MATERIALIZED (
  SELECT t.id, t.attempt, t.tenant FROM tasks t
   WHERE t.id = :id AND t.state = 'running' AND t.worker_id = :worker_id AND t.lease_version = :lease_version
     AND t.lease_expires_at > :now
     FOR UPDATE OF t
), opened AS (
  INSERT INTO task_steps (task_id, name, done, until, wait, attempt, at)
  SELECT id, :step, false, :until::timestamptz, :wait_for::text::jsonb, attempt, :now FROM held
  ON CONFLICT (task_id, name) DO NOTHING
  RETURNING task_id
), step AS MATERIALIZED (
  SELECT h.id, COALESCE(s.done, false) AS done,
         CASE WHEN s.task_id IS NULL THEN :until::timestamptz ELSE s.until END AS until
    FROM held h LEFT JOIN task_steps s ON s.task_id = h.id AND s.name = :step
), refiled AS (
  -- A field filed more than ten minutes ago is marked filed again (delete_unwaited_fields spares
  -- what was filed within the hour); a fresher one is left unlocked, so that many tasks waiting on
  -- one field do not queue on its row.
  UPDATE event_fields ef SET filed_at = :now
    FROM held h
   WHERE :wait_for::text::jsonb->>'kind' = 'event' AND ef.tenant = COALESCE(h.tenant, '')
     AND ef.name = :wait_for::text::jsonb->>'name' AND ef.field = :wait_for::text::jsonb->>'field'
     AND ef.filed_at < :now - interval '10 minutes'
), field AS (
  INSERT INTO event_fields (tenant, name, field, filed_at)
  SELECT COALESCE(tenant, ''), :wait_for::text::jsonb->>'name', :wait_for::text::jsonb->>'field', :now
    FROM held WHERE :wait_for::text::jsonb->>'kind' = 'event'
  ON CONFLICT DO NOTHING
), claimed AS (
  SELECT max(e.at) AS at FROM task_events e
   WHERE e.task_id = :id AND e.reason = 'claimed' AND :wait_for::text::jsonb->>'kind' = 'event'
), early AS (
  INSERT INTO task_signals (task_id, kind, name, payload, at)
  SELECT h.id, 'event', e.name, jsonb_build_object('id', e.id, 'name', e.name, 'data', e.data), e.at
    FROM held h, claimed c, events e
   WHERE :wait_for::text::jsonb->>'kind' = 'event' AND e.name = :wait_for::text::jsonb->>'name' AND e.at >= c.at
     AND e.tenant = COALESCE(h.tenant, '')
     AND e.data #>> string_to_array(substr(:wait_for::text::jsonb->>'field', 6), '.') = :wait_for::text::jsonb->>'value'
     AND NOT EXISTS (SELECT 1 FROM task_signals g WHERE g.task_id = h.id AND g.kind = 'event'
                                                    AND g.payload->>'id' = e.id)
  RETURNING task_id
), ready AS MATERIALIZED (
  SELECT st.id, st.until,
         st.done OR COALESCE(st.until <= :now, false) OR EXISTS (SELECT 1 FROM early)
           OR EXISTS (SELECT 1 FROM task_signals g
                       WHERE g.task_id = st.id AND g.taken_by IS NULL
                         AND g.kind = :wait_for::text::jsonb->>'kind' AND g.name = :wait_for::text::jsonb->>'name') AS now
    FROM step st
), marked AS (
  UPDATE tasks t
     SET wait = CASE WHEN r.now THEN NULL
                     ELSE :wait_for::text::jsonb
                          || jsonb_build_object('step', :step::text,
                                                'until', to_char(r.until AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.US"Z"'))
                END
    FROM ready r WHERE t.id = r.id AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired')
)
SELECT until, now AS ready FROM ready;

-- name: suspend_recheck
-- :id, :now. After a suspended attempt's end committed: a signal or event that arrived while it
-- was being written (it saw the task running, so it only buffered) wakes the task now.
UPDATE tasks t
   SET wait = NULL, run_at = :now, updated_at = :now
 WHERE t.id = :id AND t.state = 'pending' AND t.wait IS NOT NULL AND t.wait->>'kind' IN ('signal', 'event')
   AND EXISTS (SELECT 1 FROM task_signals g
                WHERE g.task_id = t.id AND g.taken_by IS NULL
                  AND g.kind = t.wait->>'kind' AND g.name = t.wait->>'name')
RETURNING t.id, t.queue, t.type, t.payload::text AS payload, t.priority, t.lease_version, t.attempt, t.max_attempts,
          t.timeout_ms, t.run_at, t.tenant, t.concurrency_key, t.start_by, t.schedule, t.scheduled_for, t.flow_id,
          t.join_mode, t.flow_key;

-- name: signal_send
-- :id task, :tenant the caller's tenant (null: any), :name, :payload (JSON), :key the sender's
-- Idempotency-Key (null: none), :now, :most signals a task may be sent. Buffers a signal for a task
-- that has not ended and has been sent fewer than :most (else answers full), and wakes it when it
-- waits for that name. The task's row is locked first, so that a suspend being written
-- either lands first (and this sees the wait) or sees the signal when it looks (suspend_recheck).
-- A key sent before answers the first signal's id and changes nothing. Answers the task's state
-- (no row: no such task for this caller), the signal's id, whether it was sent before, and the
-- task's page-in columns when it woke.
WITH t AS MATERIALIZED (
  SELECT id, state, wait FROM tasks
   WHERE id = :id AND (:tenant::text IS NULL OR tenant = :tenant)
     FOR UPDATE
), prior AS (
  SELECT g.id FROM task_signals g, t WHERE g.task_id = t.id AND g.idempotency_key = :key::text
), ins AS (
  INSERT INTO task_signals (task_id, kind, name, payload, at, idempotency_key)
  SELECT id, 'signal', :name, :payload::text::jsonb, :now, :key::text FROM t
   WHERE state NOT IN ('succeeded', 'failed', 'cancelled', 'expired') AND NOT EXISTS (SELECT 1 FROM prior)
     AND (SELECT count(*) FROM task_signals g WHERE g.task_id = t.id AND g.kind = 'signal') < :most
  ON CONFLICT (task_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
  RETURNING id, task_id
), woke AS (
  UPDATE tasks x
     SET wait = NULL, run_at = :now, updated_at = :now
    FROM t
   WHERE x.id = t.id AND t.state = 'pending' AND t.wait->>'kind' = 'signal' AND t.wait->>'name' = :name
     AND x.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired')
     AND EXISTS (SELECT 1 FROM ins)
  RETURNING x.id, x.queue, x.type, x.payload::text AS payload, x.priority, x.lease_version, x.attempt,
            x.max_attempts, x.timeout_ms, x.run_at, x.tenant, x.concurrency_key, x.start_by, x.schedule,
            x.scheduled_for, x.flow_id, x.join_mode, x.flow_key
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, lease_version, attempt, at, detail)
  SELECT x.id, 'pending', 'pending', 'resumed', x.lease_version, x.attempt, :now,
         jsonb_build_object('by', 'signal', 'signal', :name::text)
    FROM woke x
)
SELECT t.state, COALESCE(ins.id, prior.id) AS signal_id, prior.id IS NOT NULL AS repeated,
       t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired') AND ins.id IS NULL AND prior.id IS NULL AS full, w.*
  FROM t LEFT JOIN ins ON true LEFT JOIN prior ON true LEFT JOIN woke w ON true;

-- name: event_answer
-- :tenant, :id. The answer given when the event was first received (null: not given yet).
SELECT answer::text AS answer FROM events WHERE tenant = :tenant AND id = :id;

-- name: events_receive
-- :tenants ('' for none), :ids, :names, :datas (JSON), one element an event, :now, :most_woken the
-- most tasks one event wakes through one field in this statement, :again whether these events were
-- recorded by an earlier statement of this transaction (deliver only). Records events and delivers
-- each one whose id is new to every task of its tenant waiting for its name whose field matches: for
-- each field waited on for that name (few), the event's value of it is read first and the tasks
-- found in tasks_event_waits by it (left to join, the planner read every wait of the name to compare
-- values). Each task gets the event in its signals, taken by its wait when it runs, and is woken. An
-- event reaching more than :most_woken tasks through a field is delivered again (:again) until it
-- reaches fewer: a woken task no longer waits, and one statement never copies an event's data to
-- more than that many tasks. An id seen before (or twice in the statement) delivers nothing: the
-- insert waits for a concurrent one of the same id, and then finds it. Rows are locked as
-- signal_send locks them. Answers, on every row, whether each event was new and how many tasks it
-- reached (arrays in the order given), with a task woken per row (one row with none when none woke).
WITH req AS MATERIALIZED (
  SELECT DISTINCT ON (tenant, id) r.*
    FROM unnest(:tenants::text[], :ids::text[], :names::text[], :datas::text[]) WITH ORDINALITY
         AS r(tenant, id, name, data, ord)
   ORDER BY tenant, id, ord
), ins AS (
  INSERT INTO events (tenant, id, name, data, at)
  SELECT tenant, id, name, data::jsonb, :now FROM req WHERE NOT :again ORDER BY tenant, id
  ON CONFLICT DO NOTHING
  RETURNING tenant, id
), fresh AS MATERIALIZED (
  SELECT req.* FROM req JOIN ins ON ins.tenant = req.tenant AND ins.id = req.id
  UNION ALL
  SELECT req.* FROM req WHERE :again
), f AS MATERIALIZED (
  SELECT fr.tenant, fr.id, fr.name, fr.data, ef.field,
         fr.data::jsonb #>> string_to_array(substr(ef.field, 6), '.') AS value
    FROM fresh fr JOIN event_fields ef ON ef.tenant = fr.tenant AND ef.name = fr.name
), w AS MATERIALIZED (
  SELECT f.tenant, f.id AS event_id, f.name, f.data, found.id FROM f CROSS JOIN LATERAL (
    SELECT t.id FROM tasks t
     WHERE t.state = 'pending' AND t.wait->>'kind' = 'event' AND t.wait->>'name' = f.name
       AND t.wait->>'field' = f.field AND t.wait->>'value' = f.value AND COALESCE(t.tenant, '') = f.tenant
     ORDER BY t.id
     LIMIT :most_woken
       FOR UPDATE
  ) found
), sig AS (
  INSERT INTO task_signals (task_id, kind, name, payload, at)
  SELECT id, 'event', name, jsonb_build_object('id', event_id, 'name', name, 'data', data::jsonb), :now FROM w
), woke AS (
  UPDATE tasks x
     SET wait = NULL, run_at = :now, updated_at = :now
    FROM (SELECT DISTINCT id FROM w) w
   WHERE x.id = w.id AND x.state = 'pending' AND x.wait->>'kind' = 'event'
  RETURNING x.id, x.queue, x.type, x.payload::text AS payload, x.priority, x.lease_version, x.attempt,
            x.max_attempts, x.timeout_ms, x.run_at, x.tenant, x.concurrency_key, x.start_by, x.schedule,
            x.scheduled_for, x.flow_id, x.join_mode, x.flow_key
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, lease_version, attempt, at, detail)
  SELECT x.id, 'pending', 'pending', 'resumed', x.lease_version, x.attempt, :now, '{"by": "event"}'::jsonb
    FROM woke x
), summary AS (
  SELECT array_agg(fr.id IS NOT NULL ORDER BY r.ord) AS fresh,
         array_agg((SELECT count(*) FROM w WHERE fr.id IS NOT NULL AND w.tenant = r.tenant AND w.event_id = r.id)::int
                   ORDER BY r.ord) AS delivered
    FROM unnest(:tenants::text[], :ids::text[]) WITH ORDINALITY AS r(tenant, id, ord)
    LEFT JOIN fresh fr ON fr.tenant = r.tenant AND fr.id = r.id AND fr.ord = r.ord
)
SELECT s.fresh, s.delivered, woke.* FROM summary s LEFT JOIN woke ON true;

-- name: events_answer
-- :tenants, :ids, :answers (JSON). The answers the events were given, for their ids' repeats.
UPDATE events e SET answer = a.answer::jsonb
  FROM unnest(:tenants::text[], :ids::text[], :answers::text[]) AS a(tenant, id, answer)
 WHERE e.tenant = a.tenant AND e.id = a.id;

-- name: delete_old_events
-- :cutoff, :most most rows. Events are kept a day: for their ids, and for waits that come late.
DELETE FROM events WHERE ctid IN (SELECT ctid FROM events WHERE at < :cutoff LIMIT :most);

-- name: delete_unwaited_fields
-- :cutoff, :most most rows. Event fields no pending task waits on any more, last filed before
-- :cutoff, through tasks_event_waits. With :cutoff an hour back, a suspension that found its field
-- filed within ten minutes (suspend_open leaves it be) ran fifty minutes before this and has long
-- committed its wait, which this sees; one that marked it filed again holds its row until it
-- commits, and this reads the row anew then.
DELETE FROM event_fields WHERE ctid IN (
  SELECT ef.ctid FROM event_fields ef
   WHERE ef.filed_at < :cutoff
     AND NOT EXISTS (SELECT 1 FROM tasks t
                      WHERE t.state = 'pending' AND t.wait->>'kind' = 'event' AND t.wait->>'name' = ef.name
                        AND t.wait->>'field' = ef.field AND COALESCE(t.tenant, '') = ef.tenant)
   LIMIT :most);

-- name: wake_due
-- :now, :most most rows. Suspended tasks whose time came (a sleep's end, a wait's timeout) are
-- woken, soonest first: off the waiting index, into the one page-in reads, and answered with
-- their page-in columns for this node to hold. Any node may wake any task.
WITH due AS (
  SELECT id FROM tasks
   WHERE state = 'pending' AND wait IS NOT NULL AND run_at <= :now
   ORDER BY run_at
   LIMIT :most
     FOR UPDATE SKIP LOCKED
), woke AS (
  UPDATE tasks t SET wait = NULL, updated_at = :now
    FROM due WHERE t.id = due.id AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired')
  RETURNING t.id, t.queue, t.type, t.payload::text AS payload, t.priority, t.lease_version, t.attempt,
            t.max_attempts, t.timeout_ms, t.run_at, t.tenant, t.concurrency_key, t.start_by, t.schedule,
            t.scheduled_for, t.flow_id, t.join_mode, t.flow_key
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, lease_version, attempt, at, detail)
  SELECT id, 'pending', 'pending', 'resumed', lease_version, attempt, :now, jsonb_build_object('by', 'time')
    FROM woke
)
SELECT * FROM woke;

-- name: next_wake
-- The earliest wake time of any suspended task (null: none), from the waiting index's first entry.
SELECT min(run_at) AS next_wake FROM tasks WHERE state = 'pending' AND wait IS NOT NULL;

-- name: cancel_compensate
-- :id, :tenant the caller's tenant (null: any), :now, :detail the event's ({"by": key}). A cancel
-- that asks for compensation: a suspended task (or one waiting for a retry with steps done) is
-- woken to undo what it did (its runs see cancelled(), its success ends it cancelled); a running
-- one is marked so and compensates from its next run. A task with nothing to undo is left alone,
-- for the caller to cancel. Answers the task's state before (no row: not found), and its page-in
-- columns when it was marked.
WITH t AS MATERIALIZED (
  SELECT id, state, wait FROM tasks WHERE id = :id AND (:tenant::text IS NULL OR tenant = :tenant) FOR UPDATE
), marked AS (
  UPDATE tasks x
     SET compensating = true,
         wait = CASE WHEN t.state = 'pending' THEN NULL ELSE x.wait END,
         run_at = CASE WHEN t.state = 'pending' THEN :now ELSE x.run_at END,
         updated_at = :now
    FROM t
   WHERE x.id = t.id AND x.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired')
     AND (t.state = 'running'
          OR (t.state = 'pending'
              AND (t.wait IS NOT NULL OR EXISTS (SELECT 1 FROM task_steps s WHERE s.task_id = t.id))))
  RETURNING x.id, x.queue, x.type, x.payload::text AS payload, x.priority, x.lease_version, x.attempt,
            x.max_attempts, x.timeout_ms, x.run_at, x.tenant, x.concurrency_key, x.start_by, x.schedule,
            x.scheduled_for, x.flow_id, x.join_mode, x.flow_key, t.state AS before
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, lease_version, attempt, at, detail)
  SELECT id, before, before, 'compensate_requested', lease_version, attempt, :now, :detail::text::jsonb FROM marked
)
SELECT t.state, m.* FROM t LEFT JOIN marked m ON true;

-- name: task_steps
-- :id, :after the position the previous page ended with (null: from the first), :most rows,
-- :max_bytes the most their results may weigh together (the first answered whatever it weighs).
-- A page of a task's steps as its reads show them: in the order reached (the open wait last), with
-- how many were fetched for the page, so that the reader knows whether the bytes cut it.
WITH p AS (
  SELECT name, done, result::text AS result, until, wait::text AS wait, attempt, at, position
    FROM task_steps WHERE task_id = :id AND (:after::bigint IS NULL OR position > :after)
   ORDER BY position
   LIMIT :most
), w AS (
  SELECT p.*, row_number() OVER (ORDER BY position) AS n, count(*) OVER () AS fetched,
         sum(COALESCE(octet_length(result), 0)) OVER (ORDER BY position) AS upto
    FROM p
)
SELECT * FROM w WHERE n = 1 OR upto <= :max_bytes ORDER BY position;

-- name: task_signals_waiting
-- :id, :after the signal id the previous page ended with (null: from the first), :most rows,
-- :max_bytes as task_steps. A page of the signals sent to a task and not yet taken by a wait,
-- oldest first.
WITH p AS (
  SELECT id, name, payload::text AS payload, at FROM task_signals
   WHERE task_id = :id AND kind = 'signal' AND taken_by IS NULL AND (:after::bigint IS NULL OR id > :after)
   ORDER BY id
   LIMIT :most
), w AS (
  SELECT p.*, row_number() OVER (ORDER BY id) AS n, count(*) OVER () AS fetched,
         sum(octet_length(payload)) OVER (ORDER BY id) AS upto
    FROM p
)
SELECT * FROM w WHERE n = 1 OR upto <= :max_bytes ORDER BY id;

-- name: task_wait
-- :id. The wait a suspended task is in (null: none).
SELECT wait::text AS wait FROM tasks WHERE id = :id AND state = 'pending';
