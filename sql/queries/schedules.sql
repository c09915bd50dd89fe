-- Named queries on schedules and schedule_ticks (migration 000015). A schedule's definition never
-- changes once made (a declared one may be replaced by its node's config at start-up); its ticks
-- are decided once, across nodes, by the primary key of schedule_ticks.

-- name: schedule_create
-- :id, :name, :spec spec (JSON), :origin, :now, :changed_by by. No row back: the name is taken.
INSERT INTO schedules (id, name, spec, origin, paused, created_at, changed_at, changed_by)
VALUES (:id, :name, :spec, :origin, false, :now, :now, :changed_by)
ON CONFLICT (name) DO NOTHING
RETURNING id;

-- name: schedule_declare
-- :id, :name, :spec spec (JSON), :now. A schedule declared in a node's config: made when missing,
-- its definition replaced when the config says otherwise (keeping its id, its ticks and its pause),
-- left alone when it is the same. Returns the row's origin: 'api' means the name belongs to a
-- schedule made through the API, which a config does not take over.
INSERT INTO schedules (id, name, spec, origin, paused, created_at, changed_at)
VALUES (:id, :name, :spec, 'config', false, :now, :now)
ON CONFLICT (name) DO UPDATE SET spec = EXCLUDED.spec
 WHERE schedules.origin = 'config' AND schedules.spec <> EXCLUDED.spec
RETURNING origin;

-- name: schedule_origin
-- :name
SELECT origin FROM schedules WHERE name = :name;

-- name: schedule_delete
-- :name. Its ticks go with it (ON DELETE CASCADE); its tasks stay, as any task does.
DELETE FROM schedules WHERE name = :name RETURNING id;

-- name: schedule_pause
-- :name, :paused, :now, :changed_by by. Asking for the state it is in changes nothing (a resume of
-- a running schedule must not move changed_at: no tick before a resume is owed). Returns whether
-- the schedule exists.
WITH changed AS (
  UPDATE schedules SET paused = :paused, changed_at = :now, changed_by = :changed_by
   WHERE name = :name AND paused <> :paused
  RETURNING id
)
SELECT id FROM changed
UNION ALL
SELECT id FROM schedules WHERE name = :name;

-- name: schedule_list
-- Every schedule with the newest tick decided (the tick every node takes up from), that tick's
-- outcome and task state, its skipped ticks and its last error (the newest skip that was not an
-- overlap). :name a name, or null for all.
SELECT s.id, s.name, s.spec::text AS spec, s.origin, s.paused, s.created_at, s.changed_at, s.changed_by,
       last.tick_at AS last_tick_at, last.outcome AS last_outcome, last.task_id AS last_task_id,
       last.reason AS last_reason, last.detail AS last_detail, lt.state AS last_task_state,
       sk.skipped, err.tick_at AS error_tick_at, err.decided_at AS error_at, err.detail AS error_detail
  FROM schedules s
  LEFT JOIN LATERAL (
    SELECT tick_at, outcome, task_id, reason, detail FROM schedule_ticks
     WHERE schedule_id = s.id ORDER BY tick_at DESC LIMIT 1) last ON true
  LEFT JOIN tasks lt ON lt.id = last.task_id
  LEFT JOIN LATERAL (
    SELECT coalesce(sum(ticks), 0) AS skipped FROM schedule_ticks
     WHERE schedule_id = s.id AND outcome = 'skipped') sk ON true
  LEFT JOIN LATERAL (
    SELECT tick_at, decided_at, detail FROM schedule_ticks
     WHERE schedule_id = s.id AND outcome = 'skipped' AND reason <> 'overlap'
     ORDER BY tick_at DESC LIMIT 1) err ON true
 WHERE :name::text IS NULL OR s.name = :name
 ORDER BY s.name;

-- name: schedule_cursors
-- What a node's scheduler reads on every refresh: each schedule, the newest tick decided and the
-- node that decided it.
SELECT s.id, s.name, s.spec::text AS spec, s.paused, s.created_at, s.changed_at,
       last.tick_at AS last_tick_at, last.decided_by AS last_decided_by
  FROM schedules s
  LEFT JOIN LATERAL (
    SELECT tick_at, decided_by FROM schedule_ticks
     WHERE schedule_id = s.id ORDER BY tick_at DESC LIMIT 1) last ON true;

-- name: schedule_recent_ticks
-- :schedule_id, :most most rows: the newest ticks first, with their tasks' states (null once
-- retention took the task).
SELECT st.tick_at, st.outcome, st.task_id, st.reason, st.detail, st.ticks, st.decided_at, st.decided_by,
       t.state AS task_state
  FROM schedule_ticks st
  LEFT JOIN tasks t ON t.id = st.task_id
 WHERE st.schedule_id = :schedule_id
 ORDER BY st.tick_at DESC
 LIMIT :most;

-- name: ticks_decided
-- :schedule_ids, :tick_at tick times: those of them some node has decided. What a node that lost a
-- schedule's last tick asks before it would decide the next one itself (it leaves each tick to the
-- node that won the last one for a moment first): index lookups, no task made, no lock waited on.
SELECT r.schedule_id, r.tick_at
  FROM unnest(:schedule_ids::uuid[], :tick_at::timestamptz[]) AS r(schedule_id, tick_at)
 WHERE EXISTS (SELECT 1 FROM schedule_ticks st WHERE st.schedule_id = r.schedule_id AND st.tick_at = r.tick_at);

-- name: ticks_decide
-- :schedule_ids, :tick_at tick times, :task_ids task ids (null for a tick decided skipped),
-- :reasons reasons of the skipped, :details their details, :ticks how many ticks each row stands
-- for, :skip_if_running whether the schedule skips a tick while its last task is unfinished
-- (overlap: skip), :now, :node_id the deciding node. Inserts the ticks no node decided yet and
-- returns them, then one row ('live') for each schedule still there and not paused; the caller
-- inserts the returned fired ticks' tasks in the same transaction. A tick already decided (a node
-- got there first) is not returned and changes nothing. FOR SHARE on the schedules: a pause or a
-- delete that committed first is seen (a row updated meanwhile is read again when its writer
-- commits), and one that comes later waits for this transaction, so no tick is decided after
-- either. Rows go in in one order (schedule, tick) on every node, so that two nodes deciding the
-- same ticks wait on each other's rows in the same order and never deadlock.
WITH req AS MATERIALIZED (
  SELECT * FROM unnest(:schedule_ids::uuid[], :tick_at::timestamptz[], :task_ids::uuid[], :reasons::text[],
                       :details::text[], :ticks::bigint[], :skip_if_running::boolean[])
           AS r(schedule_id, tick_at, task_id, reason, detail, ticks, skip_if_running)
), live AS MATERIALIZED (
  SELECT s.id FROM schedules s WHERE s.id = ANY (:schedule_ids::uuid[]) AND NOT s.paused FOR SHARE
), decided AS (
  SELECT r.schedule_id, r.tick_at, r.ticks,
         CASE WHEN prev.state IN ('pending', 'running') THEN NULL ELSE r.task_id END AS task_id,
         CASE WHEN prev.state IN ('pending', 'running') THEN 'overlap' ELSE r.reason END AS reason,
         CASE WHEN prev.state IN ('pending', 'running')
              THEN 'the task of ' || to_char(prev.tick_at AT TIME ZONE 'UTC', 'YYYY-MM-DD"T"HH24:MI:SS.MS"Z"')
                   || ' (' || prev.task_id || ') was ' || prev.state
              ELSE r.detail END AS detail
    FROM req r
    JOIN live l ON l.id = r.schedule_id
    LEFT JOIN LATERAL (
      SELECT st.tick_at, st.task_id, t.state FROM schedule_ticks st JOIN tasks t ON t.id = st.task_id
       WHERE st.schedule_id = r.schedule_id AND st.outcome = 'fired' AND st.tick_at < r.tick_at
       ORDER BY st.tick_at DESC LIMIT 1) prev ON r.skip_if_running AND r.task_id IS NOT NULL
), ins AS (
  INSERT INTO schedule_ticks (schedule_id, tick_at, outcome, task_id, reason, detail, ticks, decided_at, decided_by)
  SELECT d.schedule_id, d.tick_at, CASE WHEN d.task_id IS NULL THEN 'skipped' ELSE 'fired' END, d.task_id,
         d.reason, d.detail, d.ticks, :now, :node_id
    FROM decided d
   ORDER BY d.schedule_id, d.tick_at
  ON CONFLICT (schedule_id, tick_at) DO NOTHING
  RETURNING schedule_id, tick_at, outcome, reason
)
SELECT schedule_id, tick_at, outcome, reason FROM ins
UNION ALL
SELECT id, NULL, 'live', NULL FROM live;

-- name: delete_old_ticks
-- :cutoff cut-off, :most most rows. Retention: ticks decided before the cut-off, but never a
-- schedule's newest (where every node takes up its ticks again: without it, a node would catch up
-- ticks already decided).
DELETE FROM schedule_ticks WHERE ctid IN (
  SELECT x.ctid FROM schedule_ticks x
   WHERE x.decided_at < :cutoff
     AND x.tick_at < (SELECT max(y.tick_at) FROM schedule_ticks y WHERE y.schedule_id = x.schedule_id)
   LIMIT :most);
