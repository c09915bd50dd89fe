-- Named queries on tasks and task_events. Each block starts with "-- name: <name>".
-- Every transition updates tasks and appends to task_events in ONE statement (data-modifying
-- CTEs), so the two can never disagree. Statements take arrays so that one round trip carries a
-- whole group of requests (group commit); "$now" parameters come from the node's clock.

-- name: insert_tasks
-- $1 ids, $2 queues, $3 types, $4 payloads (JSON text), $5 priorities, $6 run_at, $7 max_attempts,
-- $8 timeout_ms, $9 batch ids (null for single tasks), $10 now, $11 batch ids, $12 batch sizes
WITH new_batches AS (
  INSERT INTO batches (id, size, created_at)
  SELECT b.id, b.size, $10 FROM unnest($11::uuid[], $12::int[]) AS b(id, size)
), ins AS (
  INSERT INTO tasks (id, queue, type, state, payload, priority, run_at, max_attempts, timeout_ms,
                     batch_id, created_at, updated_at)
  SELECT r.id, r.queue, r.type, 'pending', r.payload::jsonb, r.priority, r.run_at, r.max_attempts,
         r.timeout_ms, r.batch_id, $10, $10
  FROM unnest($1::uuid[], $2::text[], $3::text[], $4::text[], $5::int[], $6::timestamptz[],
              $7::int[], $8::bigint[], $9::uuid[])
       AS r(id, queue, type, payload, priority, run_at, max_attempts, timeout_ms, batch_id)
  RETURNING id
)
INSERT INTO task_events (task_id, from_state, to_state, reason, lease_version, attempt, at)
SELECT id, NULL, 'pending', 'submitted', 0, 0, $10 FROM ins
RETURNING task_id;

-- name: claim
-- $1 ids, $2 expected lease versions, $3 worker ids, $4 lease deadlines, $5 now
-- A claim succeeds only for a task still pending at the version the claimer saw: a task that was
-- cancelled, finished or claimed elsewhere meanwhile is simply not returned.
WITH req AS (
  SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::timestamptz[])
         AS r(id, expected_version, worker_id, lease_expires_at)
), claimed AS (
  UPDATE tasks t
     SET state = 'running', lease_version = t.lease_version + 1, worker_id = req.worker_id,
         lease_expires_at = req.lease_expires_at, attempt = t.attempt + 1,
         started_at = COALESCE(t.started_at, $5), updated_at = $5
    FROM req
   WHERE t.id = req.id AND t.state = 'pending' AND t.lease_version = req.expected_version
     AND t.run_at <= $5
  RETURNING t.id, t.lease_version, t.attempt, t.worker_id
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at)
  SELECT id, 'pending', 'running', 'claimed', worker_id, lease_version, attempt, $5 FROM claimed
)
SELECT id, lease_version, attempt FROM claimed;

-- name: finish
-- $1 ids, $2 lease versions, $3 worker ids, $4 target states, $5 results (JSON text),
-- $6 errors (JSON text), $7 reasons, $8 now
-- Fenced: lands only while state, worker and version match and the lease is live, checked in the
-- statement that writes. A stale worker's row is not returned and the caller counts it.
WITH req AS (
  SELECT * FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::text[], $5::text[], $6::text[], $7::text[])
         AS r(id, lease_version, worker_id, to_state, result, error, reason)
), done AS (
  UPDATE tasks t
     SET state = req.to_state, result = req.result::jsonb, error = req.error::jsonb,
         progress_percent = CASE WHEN req.to_state = 'succeeded' THEN 100 ELSE t.progress_percent END,
         worker_id = NULL, lease_expires_at = NULL, finished_at = $8, updated_at = $8
    FROM req
   WHERE t.id = req.id AND t.state = 'running' AND t.worker_id = req.worker_id
     AND t.lease_version = req.lease_version AND t.lease_expires_at > $8
  RETURNING t.id, t.lease_version, t.attempt, req.worker_id, req.to_state, req.reason, req.error
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail)
  SELECT id, 'running', to_state, reason, worker_id, lease_version, attempt, $8, error::jsonb FROM done
)
SELECT id FROM done;

-- name: heartbeat
-- $1 ids, $2 lease versions, $3 worker ids, $4 new deadlines, $5 now
UPDATE tasks t
   SET lease_expires_at = r.lease_expires_at
  FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::timestamptz[]) AS r(id, lease_version, worker_id, lease_expires_at)
 WHERE t.id = r.id AND t.state = 'running' AND t.worker_id = r.worker_id
   AND t.lease_version = r.lease_version AND t.lease_expires_at > $5
RETURNING t.id;

-- name: progress
-- $1 ids, $2 lease versions, $3 worker ids, $4 percents, $5 messages, $6 now
UPDATE tasks t
   SET progress_percent = r.percent, progress_message = r.message, updated_at = $6
  FROM unnest($1::uuid[], $2::bigint[], $3::text[], $4::int[], $5::text[]) AS r(id, lease_version, worker_id, percent, message)
 WHERE t.id = r.id AND t.state = 'running' AND t.worker_id = r.worker_id
   AND t.lease_version = r.lease_version AND t.lease_expires_at > $6
RETURNING t.id;

-- name: release_expired
-- $1 now, $2 most rows. Any node's lapsed lease goes back to pending with a new version, which
-- fences the old holder at once; the next claim counts the attempt, the takeover does not.
WITH expired AS (
  SELECT id, worker_id, lease_version FROM tasks
   WHERE state = 'running' AND lease_expires_at <= $1
   ORDER BY lease_expires_at
   LIMIT $2
   FOR UPDATE SKIP LOCKED
), released AS (
  UPDATE tasks t
     SET state = 'pending', lease_version = t.lease_version + 1, worker_id = NULL,
         lease_expires_at = NULL, run_at = $1, updated_at = $1
    FROM expired e
   WHERE t.id = e.id
  RETURNING t.id, t.queue, t.lease_version, t.attempt, e.worker_id AS old_worker, e.lease_version AS old_version
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail)
  SELECT id, 'running', 'pending', 'lease_expired', old_worker, lease_version, attempt, $1,
         jsonb_build_object('previousWorker', old_worker, 'previousLeaseVersion', old_version)
    FROM released
)
SELECT id, queue FROM released;

-- name: page_in
-- $1 queue, $2 now, $3 ids already held in memory, $4 most rows. Oldest first within priority.
SELECT id, queue, type, payload::text AS payload, priority, lease_version, attempt, max_attempts,
       timeout_ms, created_at
  FROM tasks
 WHERE state = 'pending' AND queue = $1 AND run_at <= $2 AND NOT (id = ANY ($3::uuid[]))
 ORDER BY priority DESC, created_at, id
 LIMIT $4
   FOR UPDATE SKIP LOCKED;

-- name: get_task
SELECT * FROM tasks WHERE id = $1;

-- name: task_history
SELECT event_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail
  FROM task_events WHERE task_id = $1 ORDER BY event_id;

-- name: list_tasks
-- $1 state, $2 queue, $3 type, $4 after (exclusive; pages go newest first), $5 limit
SELECT * FROM tasks
 WHERE ($1::text IS NULL OR state = $1)
   AND ($2::text IS NULL OR queue = $2)
   AND ($3::text IS NULL OR type = $3)
   AND ($4::uuid IS NULL OR id < $4)
 ORDER BY id DESC
 LIMIT $5;

-- name: get_batch
SELECT id, size, created_at FROM batches WHERE id = $1;

-- name: batch_tasks
SELECT * FROM tasks WHERE batch_id = $1 ORDER BY id;

-- name: ping
SELECT 1;
