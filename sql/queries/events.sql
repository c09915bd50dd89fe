-- Named queries for following tasks live (Server-Sent Events). Each block starts with "-- name:".

-- name: stream_snapshot
-- :ids task ids, :max_inline the most one task's result and error may weigh and be shown,
-- :max_page the most those shown may weigh together. The current state of each task, the id of its
-- newest event, and its result and error unless those bounds leave them out (bytes says how much
-- they weigh: the task's own read shows them).
WITH s AS (
  SELECT t.id, t.state, t.attempt, t.progress_percent, t.progress_message, t.result, t.error,
         COALESCE(octet_length(t.result::text), 0) + COALESCE(octet_length(t.error::text), 0) AS bytes,
         (SELECT max(e.event_id) FROM task_events e WHERE e.task_id = t.id) AS last_event_id
    FROM tasks t
   WHERE t.id = ANY (:ids::uuid[])
), w AS (
  SELECT s.*, sum(CASE WHEN s.bytes <= :max_inline THEN s.bytes ELSE 0 END) OVER (ORDER BY s.id) AS upto FROM s
)
SELECT w.id, w.state, w.attempt, w.progress_percent, w.progress_message, w.last_event_id, w.bytes,
       CASE WHEN w.bytes <= :max_inline AND w.upto <= :max_page THEN w.result END AS result,
       CASE WHEN w.bytes <= :max_inline AND w.upto <= :max_page THEN w.error END AS error
  FROM w
 ORDER BY w.id;

-- name: stream_events
-- :ids task ids, :after after this event id, :most most events, :max_inline and :max_page as for
-- stream_snapshot. The events of the tasks after the cursor, in id order, with a succeeded task's
-- result unless those bounds leave it out (result_bytes says how much it weighs: the task's own
-- read shows it); and, on every row, the transactions in progress at this statement's snapshot (one
-- row with no event when there is none). Event ids come from a sequence, so an id taken by a
-- transaction that has not committed yet can be lower than one already visible: the reader holds
-- visible events back until every transaction that was in progress when it saw them has ended (see
-- events.TaskStream).
WITH e AS (
  SELECT ev.*, CASE WHEN ev.to_state = 'succeeded' THEN COALESCE(octet_length(t.result::text), 0) END AS result_bytes
    FROM (SELECT * FROM task_events
           WHERE task_id = ANY (:ids::uuid[]) AND event_id > :after
           ORDER BY event_id
           LIMIT :most) ev
    LEFT JOIN tasks t ON t.id = ev.task_id AND t.id = ANY (:ids::uuid[])
), w AS (
  SELECT e.*, sum(CASE WHEN e.result_bytes <= :max_inline THEN e.result_bytes ELSE 0 END)
                OVER (ORDER BY e.event_id) AS upto
    FROM e
)
SELECT s.in_progress, w.event_id, w.task_id, w.from_state, w.to_state, w.reason, w.worker_id, w.attempt,
       w.lease_version, w.at, w.detail, w.result_bytes,
       CASE WHEN w.result_bytes <= :max_inline AND w.upto <= :max_page THEN t.result END AS result
  FROM (SELECT ARRAY(SELECT x::text FROM pg_snapshot_xip(pg_current_snapshot()) AS x) AS in_progress) s
  LEFT JOIN w ON true
  LEFT JOIN tasks t ON t.id = w.task_id AND t.id = ANY (:ids::uuid[])
 ORDER BY w.event_id;

-- name: changed_since
-- :ids task ids, :after event id. Which of the tasks have events after the id: the periodic nudge
-- that lets streams hear of changes made by other nodes.
SELECT DISTINCT task_id FROM task_events WHERE task_id = ANY (:ids::uuid[]) AND event_id > :after;

-- name: running_progress
-- :ids task ids. Progress of those running, as last written by their lease holder: how streams on
-- this node follow tasks that run on another.
SELECT id, progress_percent, progress_message FROM tasks
 WHERE id = ANY (:ids::uuid[]) AND state = 'running' AND progress_percent IS NOT NULL;

-- name: max_event_id
-- The newest event id handed out (committed or not): a watermark for the catch-up, which looks
-- back two passes anyway. Reading the sequence costs nothing; max(event_id) would scan the table.
SELECT last_value AS max_event_id FROM task_events_event_id_seq;

-- name: batch_task_ids
-- :id. A batch's id is made before its tasks' ids (see flows.sql): t.id > :id leaves the older
-- units of the journal out of the plan.
SELECT t.id FROM batches b JOIN tasks t ON t.id BETWEEN b.first_task_id AND b.last_task_id
 WHERE b.id = :id AND t.batch_id = :id AND t.id > :id;
