-- Named queries on tasks and task_events. Each block starts with "-- name: <name>".
-- Every transition updates tasks and appends to task_events in ONE statement (data-modifying
-- CTEs), so the two can never disagree. Statements take arrays so that one round trip carries a
-- whole group of requests (group commit); ":now" parameters come from the node's clock. Parameters
-- are named (:name); the node numbers them once, as it reads this file.
--
-- Plans: the statements that write a group of tasks by id (claim, finish, heartbeat, progress) must
-- find each task through the primary key, whatever the table's statistics say. A literal
-- "t.state = 'pending'" lets the planner use a partial index on state instead, and it does when
-- the statistics are stale (a fresh table, a burst since the last ANALYZE): a hash join over every
-- pending task for each claim, 100 ms instead of 10 at 100,000 waiting. Likewise "lease_expires_at
-- > now", with "now" past the newest deadline the statistics know, reads as "no row": a sequential
-- scan as the outer side of a join. So the state a writer expects and the time it writes at come
-- from the request rows (held_state and at, in a MATERIALIZED list the planner cannot see into),
-- like the expected lease version: the same checks, but nothing on the task alone to misjudge.
--
-- Partitions (migration 000030): a statement that touches only unfinished tasks also says
-- t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired'), a literal that leaves only
-- tasks_live (and the previous layout's tasks_legacy, where it is kept) in the plan: every unit of
-- finished tasks is pruned at planning, so the statement costs the same whatever the journal's age.
-- Said as NOT IN, which the planner reads as "nearly every row" even with no statistics, where IN
-- (the live states) reads as a few percent of them on a table not yet analyzed; and it implies no
-- partial index's predicate, which would be the misjudgement above again. The statements that write
-- a group by id also say t.id = ANY (:ids): a table analyzed while empty, then filled by a burst, is
-- taken for a fraction of its size, and a hash of all of it could otherwise look cheaper than the
-- group's probes; the array is the group's, so the primary key is walked for it whatever the
-- statistics say.

-- name: insert_tasks
-- :ids, :queues, :types, :payloads payloads (JSON text), :priorities, :run_at, :max_attempts,
-- :timeout_ms, :batch_ids batch ids (null for single tasks), :now, :new_batches batch ids,
-- :batch_sizes, :worker_ids, :lease_expires_at lease deadlines, :batch_first_ids and
-- :batch_last_ids each batch's smallest and largest task id (the range in which its tasks are
-- found), :tenants tenants (null for a task without one), :concurrency_keys concurrency keys (null
-- for none; a keyed task is never inserted claimed: its key's room is decided by the claim, see
-- claim_gated), :start_by the deadlines of first starts (null for none; a task with one is never
-- inserted claimed either: :now is when the group went out, which may be past the deadline
-- admission checked, and only a claim checks a deadline against its own time), :schedules and
-- :scheduled_for the schedule and tick a scheduled task was made for (null for others). A task with
-- a worker id is dispatched at once: its worker had a free slot and nothing waited, so it is
-- inserted claimed (lease version 1, attempt 1) and both transitions are journaled here, which
-- spares the claim statement and its round trip. Nothing is returned: the command's row count
-- (events journaled) is the check, and a row per event would only be decoded to be counted.
WITH new_batches AS (
  INSERT INTO batches (id, size, created_at, first_task_id, last_task_id)
  SELECT b.id, b.size, :now, b.first_task_id, b.last_task_id
    FROM unnest(:new_batches::uuid[], :batch_sizes::int[], :batch_first_ids::uuid[], :batch_last_ids::uuid[])
         AS b(id, size, first_task_id, last_task_id)
), ins AS (
  INSERT INTO tasks (id, queue, type, state, payload, priority, run_at, max_attempts, timeout_ms,
                     batch_id, created_at, updated_at, worker_id, lease_version, attempt,
                     lease_expires_at, started_at, tenant, concurrency_key, start_by, schedule, scheduled_for)
  SELECT r.id, r.queue, r.type, CASE WHEN r.worker_id IS NULL THEN 'pending' ELSE 'running' END,
         r.payload::jsonb, r.priority, r.run_at, r.max_attempts, r.timeout_ms, r.batch_id, :now, :now,
         r.worker_id, CASE WHEN r.worker_id IS NULL THEN 0 ELSE 1 END,
         CASE WHEN r.worker_id IS NULL THEN 0 ELSE 1 END, r.lease_expires_at,
         CASE WHEN r.worker_id IS NULL THEN NULL ELSE :now END, r.tenant, r.concurrency_key, r.start_by,
         r.schedule, r.scheduled_for
  FROM unnest(:ids::uuid[], :queues::text[], :types::text[], :payloads::text[], :priorities::int[],
              :run_at::timestamptz[], :max_attempts::int[], :timeout_ms::bigint[], :batch_ids::uuid[],
              :worker_ids::text[], :lease_expires_at::timestamptz[], :tenants::text[], :concurrency_keys::text[],
              :start_by::timestamptz[], :schedules::text[], :scheduled_for::timestamptz[])
       AS r(id, queue, type, payload, priority, run_at, max_attempts, timeout_ms, batch_id, worker_id,
            lease_expires_at, tenant, concurrency_key, start_by, schedule, scheduled_for)
  RETURNING id, worker_id
)
INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at)
SELECT id, NULL, 'pending', 'submitted', NULL, 0, 0, :now FROM ins
UNION ALL
SELECT id, 'pending', 'running', 'claimed', worker_id, 1, 1, :now FROM ins WHERE worker_id IS NOT NULL;

-- name: claim
-- :ids, :expected_versions expected lease versions, :worker_ids, :lease_expires_at lease deadlines,
-- :now A claim succeeds only for a task still pending at the version the claimer saw: a task that
-- was cancelled, finished or claimed elsewhere meanwhile is simply not returned. Nor is one that
-- never started and is past the deadline of its first start (000014): it is expire_overdue's to
-- end, not a worker's to run late. Every way a task goes from pending to running (a local worker's,
-- a remote worker's, claim_gated) goes through this check; insert_tasks claims no task with a
-- deadline.
WITH req AS MATERIALIZED (
  SELECT r.*, 'pending'::text AS held_state, :now::timestamptz AS at
    FROM unnest(:ids::uuid[], :expected_versions::bigint[], :worker_ids::text[], :lease_expires_at::timestamptz[])
         AS r(id, expected_version, worker_id, lease_expires_at)
), claimed AS (
  UPDATE tasks t
     SET state = 'running', lease_version = t.lease_version + 1, worker_id = req.worker_id,
         lease_expires_at = req.lease_expires_at, attempt = t.attempt + 1,
         started_at = COALESCE(t.started_at, :now), updated_at = :now
    FROM req
   WHERE t.id = req.id AND t.state = req.held_state AND t.lease_version = req.expected_version
     AND t.run_at <= req.at AND (t.start_by IS NULL OR t.start_by >= req.at OR t.attempt > 0)
     AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired') AND t.id = ANY (:ids::uuid[])
  RETURNING t.id, t.lease_version, t.attempt, t.worker_id
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at)
  SELECT id, 'pending', 'running', 'claimed', worker_id, lease_version, attempt, :now FROM claimed
)
SELECT id, lease_version, attempt FROM claimed;

-- name: read_committed
-- The first statement of a gated claim's transaction: the bound rests on each of its statements
-- seeing what committed before that statement began (see claim_keys_lock), whatever isolation the
-- server defaults to. (Under REPEATABLE READ the snapshot would be taken at the lock, before the
-- claim that held it committed, and a key would run one task too many.)
SET TRANSACTION ISOLATION LEVEL READ COMMITTED;

-- name: claim_keys_lock
-- :locks the keys and rate budgets of a gated claim, as texts ("queue/key", "rate:queue/budget").
-- Taken in the claim's transaction, before the claim itself, in one order for every node (so that
-- two claims cannot deadlock): a second claim of the same key waits for the first to commit, and
-- its own statement then sees the tasks the first started. (Within one statement a READ COMMITTED
-- snapshot is older than a lock it waited for, which is why the lock is a statement of its own.)
-- Finishes take no lock: they only free room.
SELECT pg_advisory_xact_lock(h)::text AS locked
  FROM (SELECT DISTINCT hashtextextended(k, 0) AS h FROM unnest(:locks::text[]) AS u(k) ORDER BY 1) AS keys;

-- name: claim_gated
-- :ids, :expected_versions expected lease versions, :worker_ids, :lease_expires_at lease deadlines,
-- :now, :queues, :concurrency_keys, :key_limits each key's limit (0: the key is not bounded),
-- :buckets rate budgets (null: no rate limit; '' the queue's own, else the key's: see migration
-- 000013), :rate_tasks starts a budget allows per window, :rate_per_ms its window in ms. As claim,
-- for tasks their queue gates. Runs after claim_keys_lock (every key and budget of the request
-- locked), in its transaction, with :now taken once the locks are held. Tasks are taken in the
-- order asked, each only while
--  * fewer than its key's limit of that key's tasks run (on any node), counting the ones taken before
--    it here; the others are returned refused 'key_full';
--  * and, of those, while its budget's starts journaled within the window before :now and the ones
--    taken before it here are fewer than the limit; the others are returned refused 'rate_full',
--    with retry_at: when the start that filled the window leaves it, the first instant the budget
--    can start one more.
-- Refused tasks stay pending, their attempts untouched. The starts taken are journaled at their
-- claim's time, and the budget's entries more than two windows old are deleted: one window more
-- than the count reads, so that a node whose clock is ahead cannot delete what a node whose clock
-- is behind still counts (the retention job deletes what budgets no claim touches any more leave).
-- The claim's time is :now or its key's latest end, whichever is later (migrations 000011 and
-- 000012): every write's time is its node's clock when the statement was sent, not when it
-- committed, and a claim that saw an end must not carry an earlier time than it, or the key's
-- history would show an overlap that was not. Ends back to pending (a retry, a release, a lapsed
-- lease) leave finished_at null and are covered by the order alone: :now is read once the lock is
-- held and the statement goes out at once, so an end stamped after it would have to commit, fsync
-- included, before this statement's snapshot, within the microseconds between. A budget counts the
-- window before :now and logs each start at its claim's time, never earlier: a start stamped later
-- than :now (its key's latest end was) only counts for longer. A task past its first start's
-- deadline (at :now) is not taken, as in claim.
WITH req AS MATERIALIZED (
  SELECT r.*, 'pending'::text AS held_state, :now::timestamptz AS at
    FROM unnest(:ids::uuid[], :expected_versions::bigint[], :worker_ids::text[], :lease_expires_at::timestamptz[],
                :queues::text[], :concurrency_keys::text[], :key_limits::int[], :buckets::text[], :rate_tasks::int[],
                :rate_per_ms::bigint[])
         WITH ORDINALITY AS r(id, expected_version, worker_id, lease_expires_at, queue, concurrency_key, key_limit,
                              bucket, rate_tasks, rate_per_ms, ord)
), claimable AS (
  SELECT req.*, row_number() OVER (PARTITION BY req.queue, req.concurrency_key ORDER BY req.ord) AS key_place
    FROM req JOIN tasks t ON t.id = req.id
   WHERE t.state = req.held_state AND t.lease_version = req.expected_version AND t.run_at <= req.at
     AND (t.start_by IS NULL OR t.start_by >= req.at OR t.attempt > 0)
     AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired') AND t.id = ANY (:ids::uuid[])
), keys AS (
  SELECT k.queue, k.concurrency_key,
         (SELECT count(*) FROM tasks t
           WHERE t.queue = k.queue AND t.concurrency_key = k.concurrency_key AND t.state = 'running') AS n,
         GREATEST(:now::timestamptz, (SELECT max(t.finished_at) FROM tasks t
                                     WHERE t.queue = k.queue AND t.concurrency_key = k.concurrency_key)) AS claim_at
    FROM (SELECT DISTINCT queue, concurrency_key FROM claimable WHERE key_limit > 0) AS k
), key_ok AS (
  SELECT c.*, COALESCE(k.claim_at, :now::timestamptz) AS claim_at,
         row_number() OVER (PARTITION BY c.queue, c.bucket ORDER BY c.ord) AS rate_place
    FROM claimable c
    LEFT JOIN keys k ON c.key_limit > 0 AND k.queue = c.queue AND k.concurrency_key = c.concurrency_key
   WHERE c.key_limit = 0 OR c.key_place <= c.key_limit - k.n
), budgets AS (
  SELECT b.*, :now::timestamptz - b.rate_per_ms * interval '1 millisecond' AS window_start
    FROM (SELECT DISTINCT queue, bucket, rate_tasks, rate_per_ms FROM claimable WHERE bucket IS NOT NULL) AS b
), rooms AS (
  SELECT b.queue, b.bucket,
         b.rate_tasks - COALESCE((SELECT sum(s.n) FROM rate_starts s
                                   WHERE s.queue = b.queue AND s.bucket = b.bucket AND s.at > b.window_start), 0) AS room
    FROM budgets b
), allowed AS (
  SELECT o.* FROM key_ok o LEFT JOIN rooms r ON r.queue = o.queue AND r.bucket = o.bucket
   WHERE o.bucket IS NULL OR o.rate_place <= r.room
), claimed AS (
  UPDATE tasks t
     SET state = 'running', lease_version = t.lease_version + 1, worker_id = req.worker_id,
         lease_expires_at = req.lease_expires_at, attempt = t.attempt + 1,
         started_at = COALESCE(t.started_at, req.claim_at), updated_at = req.claim_at
    FROM allowed req
   WHERE t.id = req.id AND t.state = req.held_state AND t.lease_version = req.expected_version
     AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired') AND t.id = ANY (:ids::uuid[])
  RETURNING t.id, t.lease_version, t.attempt, t.worker_id, req.claim_at, req.queue, req.bucket
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at)
  SELECT id, 'pending', 'running', 'claimed', worker_id, lease_version, attempt, claim_at FROM claimed
), started AS (
  SELECT queue, bucket, claim_at AS at, count(*)::int AS n FROM claimed WHERE bucket IS NOT NULL
   GROUP BY queue, bucket, claim_at
), logged AS (
  INSERT INTO rate_starts (queue, bucket, at, n) SELECT queue, bucket, at, n FROM started
), pruned AS (
  DELETE FROM rate_starts s USING budgets b
   WHERE s.queue = b.queue AND s.bucket = b.bucket
     AND s.at <= b.window_start - b.rate_per_ms * interval '1 millisecond'
), window_starts AS (
  -- The window's starts after this claim, newest first, each with the sum of it and those newer:
  -- the newest whose sum reaches the limit is the one that filled the window.
  SELECT e.queue, e.bucket, e.at, b.rate_tasks, b.rate_per_ms,
         sum(e.n) OVER (PARTITION BY e.queue, e.bucket ORDER BY e.at DESC ROWS UNBOUNDED PRECEDING) AS newer
    FROM (SELECT s.queue, s.bucket, s.at, s.n FROM rate_starts s JOIN budgets b USING (queue, bucket)
           WHERE s.at > b.window_start
          UNION ALL
          SELECT queue, bucket, at, n FROM started) AS e
    JOIN budgets b USING (queue, bucket)
), next_room AS (
  SELECT queue, bucket, max(at) + max(rate_per_ms) * interval '1 millisecond' AS retry_at
    FROM window_starts WHERE newer >= rate_tasks GROUP BY queue, bucket
)
SELECT id, lease_version, attempt, NULL::text AS refused, NULL::timestamptz AS retry_at FROM claimed
UNION ALL
SELECT c.id, NULL, NULL, CASE WHEN k.id IS NULL THEN 'key_full' ELSE 'rate_full' END, n.retry_at
  FROM claimable c
  LEFT JOIN key_ok k ON k.id = c.id
  LEFT JOIN next_room n ON n.queue = c.queue AND n.bucket = c.bucket
 WHERE NOT EXISTS (SELECT 1 FROM allowed a WHERE a.id = c.id);

-- name: finish
-- :ids, :lease_versions, :worker_ids, :to_states target states, :results results (JSON text),
-- :errors errors (JSON text), :reasons, :run_at run_at (for a return to pending), :attempt_deltas
-- attempt adjustments, :version_bumps lease version bumps, :now, :cancel_wins whether a cancel
-- request wins over the end written (a remote worker's, which cannot know of the request),
-- :drop_deadlines whether the task's first-start deadline is dropped (an attempt given back after
-- its handler ran: the task did start, see Journal.Attempts) Ends an attempt: in a terminal state,
-- or back to pending (a retry, a snooze, a release at shutdown). Fenced: lands only while state,
-- worker and version match and the lease is live, checked in the statement that writes. A stale
-- worker's row is not returned and the caller counts it. A task asked to cancel never goes back to
-- pending: it ends cancelled; nor, where :cancel_wins says so, does it end succeeded or failed. A
-- compensating task (steps.sql, cancel_compensate) that succeeds has undone its work: cancelled.
-- A flow task's end settles its children in the same statement (flow_settle, migration 000017):
-- rows of kind ready are children that became pending, cancelled children cancelled with it, flow
-- flows that ended; the attempts' own rows have no kind.
WITH req AS MATERIALIZED (
  SELECT r.*, 'running'::text AS held_state, :now::timestamptz AS at
    FROM unnest(:ids::uuid[], :lease_versions::bigint[], :worker_ids::text[], :to_states::text[], :results::text[],
                :errors::text[], :reasons::text[], :run_at::timestamptz[], :attempt_deltas::int[], :version_bumps::int[],
                :cancel_wins::boolean[], :drop_deadlines::boolean[])
         AS r(id, lease_version, worker_id, to_state, result, error, reason, run_at, attempt_delta, version_bump,
              cancel_wins, drop_deadline)
), done AS (
  -- One pass over each row: the SET and RETURNING expressions read the row as it stands when it is
  -- locked (a cancel request that committed meanwhile is seen), so no separate read is needed.
  UPDATE tasks t
     SET state = CASE WHEN t.cancel_requested AND (req.to_state = 'pending' OR req.cancel_wins) THEN 'cancelled'
                      WHEN t.compensating AND req.to_state = 'succeeded' THEN 'cancelled'
                      ELSE req.to_state END,
         result = req.result::jsonb, error = req.error::jsonb,
         progress_percent = CASE WHEN req.to_state = 'succeeded' AND NOT (t.cancel_requested AND req.cancel_wins)
                                 THEN 100 ELSE t.progress_percent END,
         run_at = COALESCE(req.run_at, t.run_at),
         attempt = t.attempt + req.attempt_delta,
         start_by = CASE WHEN req.drop_deadline THEN NULL ELSE t.start_by END,
         lease_version = t.lease_version + req.version_bump,
         worker_id = NULL, lease_expires_at = NULL,
         cancel_requested = false,
         finished_at = CASE WHEN req.to_state = 'pending' AND NOT t.cancel_requested THEN NULL ELSE :now END,
         updated_at = :now
    FROM req
   WHERE t.id = req.id AND t.state = req.held_state AND t.worker_id = req.worker_id
     AND t.lease_version = req.lease_version AND t.lease_expires_at > req.at
     AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired') AND t.id = ANY (:ids::uuid[])
  RETURNING t.id, t.state, t.lease_version, t.attempt, req.worker_id,
            CASE WHEN t.state = 'cancelled' AND (req.to_state = 'pending' OR req.cancel_wins OR t.compensating)
                 THEN 'cancelled' ELSE req.reason END AS final_reason,
            req.error, req.run_at, t.flow_id
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail)
  SELECT id, 'running', state, final_reason, worker_id, lease_version, attempt, :now,
         CASE WHEN run_at IS NULL THEN error::jsonb
              ELSE COALESCE(error::jsonb, '{}'::jsonb) || jsonb_build_object('runAt', run_at) END
    FROM done
), flow_ends AS (
  SELECT array_agg(id) AS ids, array_agg(flow_id) AS flows, array_agg(state) AS states
    FROM done WHERE flow_id IS NOT NULL AND state <> 'pending'
)
SELECT NULL::text AS kind, id, state, NULL::jsonb AS task FROM done
UNION ALL
SELECT s.* FROM flow_ends, flow_settle(flow_ends.ids, flow_ends.flows, flow_ends.states, :now) AS s;

-- name: heartbeat
-- :ids, :lease_versions, :worker_ids, :lease_expires_at new deadlines, :now. Also tells the holder
-- whether someone asked to cancel, which is how a worker on another node learns of it.
WITH r AS MATERIALIZED (
  SELECT u.*, 'running'::text AS held_state, :now::timestamptz AS at
    FROM unnest(:ids::uuid[], :lease_versions::bigint[], :worker_ids::text[], :lease_expires_at::timestamptz[])
         AS u(id, lease_version, worker_id, lease_expires_at)
)
UPDATE tasks t
   SET lease_expires_at = r.lease_expires_at
  FROM r
 WHERE t.id = r.id AND t.state = r.held_state AND t.worker_id = r.worker_id
   AND t.lease_version = r.lease_version AND t.lease_expires_at > r.at
   AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired') AND t.id = ANY (:ids::uuid[])
RETURNING t.id, t.cancel_requested;

-- name: progress
-- :ids, :lease_versions, :worker_ids, :percents, :messages, :now
WITH r AS MATERIALIZED (
  SELECT u.*, 'running'::text AS held_state, :now::timestamptz AS at
    FROM unnest(:ids::uuid[], :lease_versions::bigint[], :worker_ids::text[], :percents::int[], :messages::text[])
         AS u(id, lease_version, worker_id, percent, message)
)
UPDATE tasks t
   SET progress_percent = r.percent, progress_message = r.message, updated_at = :now
  FROM r
 WHERE t.id = r.id AND t.state = r.held_state AND t.worker_id = r.worker_id
   AND t.lease_version = r.lease_version AND t.lease_expires_at > r.at
   AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired') AND t.id = ANY (:ids::uuid[])
RETURNING t.id;

-- name: release_expired
-- :now, :most most rows, :most_lapses claims past max_attempts a task may have, :lapsed_error the
-- error (JSON) of a task that ends failed by it. Any node's lapsed
-- lease goes back to pending with a new version, which fences the old holder at once; the next claim
-- counts the attempt, the takeover does not. A task whose attempts passed max_attempts by
-- :most_lapses ends failed instead: one that kills or hangs whatever runs it (a poison pill) was
-- otherwise claimed and lost for ever, past maxAttempts, taking a slot each time. Answers each task
-- with its queue and whether it failed (no kind); then, as finish does, what its end settled in flows.
WITH expired AS (
  SELECT id, worker_id, lease_version, attempt >= max_attempts + :most_lapses AS spent FROM tasks
   WHERE state = 'running' AND lease_expires_at <= :now
   ORDER BY lease_expires_at
   LIMIT :most
   FOR UPDATE SKIP LOCKED
), released AS (
  UPDATE tasks t
     SET state = CASE WHEN e.spent THEN 'failed' ELSE 'pending' END,
         lease_version = t.lease_version + 1, worker_id = NULL,
         lease_expires_at = NULL, run_at = :now, updated_at = :now,
         error = CASE WHEN e.spent THEN :lapsed_error::text::jsonb ELSE t.error END,
         finished_at = CASE WHEN e.spent THEN :now END
    FROM expired e
   WHERE t.id = e.id AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired')
  RETURNING t.id, t.queue, t.lease_version, t.attempt, t.flow_id, e.spent, e.worker_id AS old_worker,
            e.lease_version AS old_version
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail)
  SELECT id, 'running', CASE WHEN spent THEN 'failed' ELSE 'pending' END, 'lease_expired', old_worker,
         lease_version, attempt, :now,
         jsonb_build_object('previousWorker', old_worker, 'previousLeaseVersion', old_version)
    FROM released
), flow_ends AS (
  SELECT array_agg(id) AS ids, array_agg(flow_id) AS flows, array_agg('failed'::text) AS states
    FROM released WHERE spent AND flow_id IS NOT NULL
)
SELECT NULL::text AS kind, id, queue, CASE WHEN spent THEN 'failed' END AS state, NULL::jsonb AS task
  FROM released
UNION ALL
SELECT s.kind, s.id, NULL, s.state, s.task
  FROM flow_ends, flow_settle(flow_ends.ids, flow_ends.flows, flow_ends.states, :now) AS s;

-- name: expire_overdue
-- :now, :most most rows. Tasks of any node that never started and are past the deadline of their
-- first start end expired, soonest deadline first. They are found through tasks_pending_start_by
-- (000014), whose predicate the search repeats word for word and which names no state, so that no
-- other index can serve it; the state is checked where each is updated, by id, as the statements
-- above check theirs. The version bump fails any claim still in flight for them (claim refuses them
-- anyway). Returns each with its queue, for the node to drop what it holds and count (no kind);
-- then, as finish does, what the ends settled in their flows.
WITH req AS MATERIALIZED (
  SELECT 'pending'::text AS held_state, :now::timestamptz AS at
), overdue AS (
  SELECT id FROM tasks
   WHERE start_by IS NOT NULL AND attempt = 0 AND finished_at IS NULL AND start_by < :now
     AND state NOT IN ('succeeded', 'failed', 'cancelled', 'expired')
   ORDER BY start_by
   LIMIT :most
   FOR UPDATE SKIP LOCKED
), gone AS (
  UPDATE tasks t
     SET state = 'expired', lease_version = t.lease_version + 1, finished_at = req.at, updated_at = req.at
    FROM overdue o, req
   WHERE t.id = o.id AND t.state = req.held_state AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired')
  RETURNING t.id, t.queue, t.lease_version, t.attempt, t.start_by, t.flow_id
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail)
  SELECT id, 'pending', 'expired', 'expired', NULL, lease_version, attempt, :now,
         jsonb_build_object('startBy', start_by)
    FROM gone
), flow_ends AS (
  SELECT array_agg(id) AS ids, array_agg(flow_id) AS flows, array_agg('expired'::text) AS states
    FROM gone WHERE flow_id IS NOT NULL
)
SELECT NULL::text AS kind, id, queue, NULL::text AS state, NULL::jsonb AS task FROM gone
UNION ALL
SELECT s.kind, s.id, NULL, s.state, s.task
  FROM flow_ends, flow_settle(flow_ends.ids, flow_ends.flows, flow_ends.states, :now) AS s;

-- name: pending_count
-- :queue, :now. How many tasks of the queue are due and waiting in the journal (a suspended task
-- is not: the waker wakes it, see steps.sql): page-in runs
-- only when that is more than this node holds, since its query must skip every id held here.
-- Tasks past their first start's deadline are left out, as page_in leaves them: no claim would take
-- them, and the sweep ends them.
SELECT count(*) AS pending FROM tasks
 WHERE state = 'pending' AND wait IS NULL AND queue = :queue AND run_at <= :now
   AND (start_by IS NULL OR start_by >= :now OR attempt > 0);

-- name: page_in
-- :queue, :now, :held_ids ids already held in memory, :most most rows, :aging_per_second the
-- queue's aging rate (priority points per second of waiting). The same order as the in-memory
-- queue: effective priority = priority + rate * seconds waited, which ranks like priority - rate *
-- run_at. A task past its first start's deadline is not read: no claim would take it (see claim).
-- durable: it has steps journaled (a claim handed back after its waits ended, say), which its next
-- attempt reads before it starts.
SELECT id, queue, type, payload::text AS payload, priority, lease_version, attempt, max_attempts,
       timeout_ms, run_at, tenant, concurrency_key, start_by, schedule, scheduled_for, flow_id, join_mode,
       flow_key, EXISTS (SELECT 1 FROM task_steps s WHERE s.task_id = tasks.id) AS durable
  FROM tasks
 WHERE state = 'pending' AND wait IS NULL AND queue = :queue AND run_at <= :now
   AND NOT (id = ANY (:held_ids::uuid[]))
   AND (start_by IS NULL OR start_by >= :now OR attempt > 0)
 ORDER BY priority - :aging_per_second * extract(epoch FROM run_at) DESC, id
 LIMIT :most
   FOR UPDATE SKIP LOCKED;

-- name: page_in_fair
-- As page_in, for a queue whose tenants take turns: each tenant's best task first, then each one's
-- second, and so on (tasks without a tenant as one more), so that a tenant with a deep backlog in
-- the journal does not fill the node's room ahead of another's tasks. (Weights are the node's
-- business, once the tasks are in memory.) The window needs a level of its own: FOR UPDATE is not
-- allowed beside one.
SELECT t.id, t.queue, t.type, t.payload::text AS payload, t.priority, t.lease_version, t.attempt, t.max_attempts,
       t.timeout_ms, t.run_at, t.tenant, t.concurrency_key, t.start_by, t.schedule, t.scheduled_for, t.flow_id,
       t.join_mode, t.flow_key, EXISTS (SELECT 1 FROM task_steps s WHERE s.task_id = t.id) AS durable
  FROM tasks t
  JOIN (SELECT id, row_number() OVER (PARTITION BY tenant
                                      ORDER BY priority - :aging_per_second * extract(epoch FROM run_at) DESC, id) AS turn,
               priority - :aging_per_second * extract(epoch FROM run_at) AS effective
          FROM tasks
         WHERE state = 'pending' AND wait IS NULL AND queue = :queue AND run_at <= :now
           AND NOT (id = ANY (:held_ids::uuid[]))
           AND (start_by IS NULL OR start_by >= :now OR attempt > 0)
         ORDER BY turn, effective DESC, id
         LIMIT :most) AS picked ON picked.id = t.id
 WHERE t.state = 'pending'
 ORDER BY picked.turn, picked.effective DESC, t.id
   FOR UPDATE OF t SKIP LOCKED;

-- name: cancel
-- :ids task ids, :batch_id batch id (or null), :now, :detail the events' detail: {"by": the key
-- that asked} (or null: auth off). A pending or blocked task is cancelled at once (and its version
-- bumped, so that any queued copy fails its claim); a running one is asked to stop. Answers one row
-- per task found: its state before, and after (no kind); then, as finish does, what its cancel
-- settled in flows (from flow_settle: a child that joins settled may run now). Rows are locked in
-- id order, as flow_settle locks children, so that a cancel and a parent's end never deadlock.
WITH target AS (
  SELECT id, state FROM tasks
   WHERE id = ANY (:ids::uuid[])
      OR (batch_id = :batch_id AND id BETWEEN (SELECT first_task_id FROM batches WHERE id = :batch_id)
                                   AND (SELECT last_task_id FROM batches WHERE id = :batch_id))
   ORDER BY id
   FOR UPDATE
), pend AS (
  UPDATE tasks t
     SET state = 'cancelled', lease_version = t.lease_version + 1, finished_at = :now, updated_at = :now
    FROM target
   WHERE t.id = target.id AND target.state IN ('pending', 'blocked') AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired')
  RETURNING t.id, t.lease_version, t.attempt, target.state AS before, t.flow_id
), run AS (
  UPDATE tasks t SET cancel_requested = true, updated_at = :now
    FROM target
   WHERE t.id = target.id AND target.state = 'running' AND NOT t.cancel_requested AND t.state NOT IN ('succeeded', 'failed', 'cancelled', 'expired')
  RETURNING t.id, t.worker_id, t.lease_version, t.attempt
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail)
  SELECT id, before, 'cancelled', 'cancelled', NULL, lease_version, attempt, :now,
         :detail::jsonb FROM pend
  UNION ALL
  SELECT id, 'running', 'running', 'cancel_requested', worker_id, lease_version, attempt, :now,
         :detail::jsonb FROM run
), flow_ends AS (
  SELECT array_agg(id) AS ids, array_agg(flow_id) AS flows, array_agg('cancelled'::text) AS states
    FROM pend WHERE flow_id IS NOT NULL
)
SELECT NULL::text AS kind, target.id, target.state AS before,
       CASE WHEN target.state IN ('pending', 'blocked') THEN 'cancelled' ELSE target.state END AS after,
       NULL::text AS state, NULL::jsonb AS task
  FROM target
UNION ALL
SELECT s.kind, s.id, NULL, NULL, s.state, s.task
  FROM flow_ends, flow_settle(flow_ends.ids, flow_ends.flows, flow_ends.states, :now) AS s;

-- name: retry
-- :ids task ids, :now, :detail the event's detail: {"by": the key that asked} (or null). Failed,
-- cancelled or expired tasks go back to pending with fresh attempts. The version bump fences
-- anything that still holds an old copy. A deadline is dropped: it was the first start's, and
-- whoever retries by hand wants the task run now, whenever that is.
WITH target AS (
  SELECT id, state FROM tasks WHERE id = ANY (:ids::uuid[]) AND state IN ('failed', 'cancelled', 'expired') FOR UPDATE
), back AS (
  UPDATE tasks t
     SET state = 'pending', attempt = 0, lease_version = t.lease_version + 1, run_at = :now,
         finished_at = NULL, cancel_requested = false, result = NULL, start_by = NULL, updated_at = :now
    FROM target
   WHERE t.id = target.id AND t.state IN ('failed', 'cancelled', 'expired')
  RETURNING t.id, t.queue, t.type, t.payload::text AS payload, t.priority, t.lease_version, t.attempt,
            t.max_attempts, t.timeout_ms, t.run_at, t.tenant, t.concurrency_key, t.start_by, t.schedule,
            t.scheduled_for, t.flow_id, t.join_mode, t.flow_key
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, lease_version, attempt, at, detail)
  SELECT back.id, target.state, 'pending', 'retried', back.lease_version, 0, :now, :detail::jsonb
    FROM back JOIN target ON target.id = back.id
)
SELECT * FROM back;

-- name: failed_ids
-- :queue, :type type (or null), :most most rows: dead letters for a bulk retry, oldest first.
SELECT id FROM tasks
 WHERE state = 'failed' AND queue = :queue AND (:type::text IS NULL OR type = :type)
 ORDER BY id
 LIMIT :most;

-- name: idempotency_lookup
-- :key, :now
SELECT request_hash, response FROM idempotency_keys WHERE key = :key AND expires_at > :now;

-- name: idempotency_claim
-- :key, :request_hash, :response, :now, :expires_at expiry. Takes the key unless a live row holds
-- it; an expired row is taken over. No row back means another request owns the key.
INSERT INTO idempotency_keys (key, request_hash, response, created_at, expires_at)
VALUES (:key, :request_hash, :response::jsonb, :now, :expires_at)
ON CONFLICT (key) DO UPDATE
   SET request_hash = EXCLUDED.request_hash, response = EXCLUDED.response,
       created_at = EXCLUDED.created_at, expires_at = EXCLUDED.expires_at
 WHERE idempotency_keys.expires_at <= :now
RETURNING key;

-- name: delete_expired_keys
-- :now, :most most rows
DELETE FROM idempotency_keys
 WHERE key IN (SELECT key FROM idempotency_keys WHERE expires_at <= :now LIMIT :most);

-- name: delete_old_rate_starts
-- :cutoff cut-off (two of the longest windows a rate limit may have before now), :most most rows.
-- Claims prune their own budget's entries (claim_gated); these are the ones left by budgets no
-- claim touches any more: a key whose tasks stopped coming, a limit taken off. The table holds
-- about two windows per budget in use, so a scan of it is cheap.
DELETE FROM rate_starts WHERE ctid IN (SELECT ctid FROM rate_starts WHERE at < :cutoff LIMIT :most);

-- name: delete_finished
-- :cutoff cut-off, :most most rows, :least_id the least task id of the cut-off's millisecond.
-- Retention of the finished tasks no unit holds (see migration 000030: units go whole, by
-- taskline_unit_drop): the previous layout's (tasks_legacy) and those whose ids no unit covered
-- (tasks_done_default). Finished tasks older than the cut-off go with their history, steps and
-- signals. A task finished before the cut-off was created before it, so its id (UUIDv7, time first)
-- sorts below :least_id: the primary keys, walked from the oldest, find them without an index on
-- finished_at (see migration 000008). The ids go as arrays, so that both deletes look them up by
-- key: as "IN (subquery)" the planner may hash them against a scan of the whole table.
-- A flow goes as a whole, once it ended before the cut-off: a task of a flow still running may
-- have ended long ago and still be a parent whose result a child has yet to read, or a failed step
-- a retry resumes from. Its edges go with their child (every edge's child is in the flow, so
-- every edge goes), its keys and its row with its last task.
WITH gone AS (
  DELETE FROM tasks
   WHERE id = ANY (ARRAY(SELECT o.id FROM (
                            (SELECT t.id FROM tasks_legacy t
                              WHERE t.id < :least_id AND t.finished_at < :cutoff
                                AND (t.flow_id IS NULL
                                     OR EXISTS (SELECT 1 FROM flows f WHERE f.id = t.flow_id AND f.finished_at < :cutoff))
                              ORDER BY t.id LIMIT :most)
                            UNION ALL
                            (SELECT t.id FROM tasks_done_default t
                              WHERE t.id < :least_id AND t.finished_at < :cutoff
                                AND (t.flow_id IS NULL
                                     OR EXISTS (SELECT 1 FROM flows f WHERE f.id = t.flow_id AND f.finished_at < :cutoff))
                              ORDER BY t.id LIMIT :most)) o
                          ORDER BY o.id LIMIT :most))
  RETURNING id, batch_id, flow_id
), events AS (
  DELETE FROM task_events WHERE task_id = ANY (ARRAY(SELECT id FROM gone))
), steps AS (
  DELETE FROM task_steps WHERE task_id = ANY (ARRAY(SELECT id FROM gone))
), signals AS (
  DELETE FROM task_signals WHERE task_id = ANY (ARRAY(SELECT id FROM gone))
), edges AS (
  DELETE FROM task_edges WHERE child_id = ANY (ARRAY(SELECT id FROM gone WHERE flow_id IS NOT NULL))
), batches_gone AS (
  DELETE FROM batches b
   WHERE b.id IN (SELECT batch_id FROM gone WHERE batch_id IS NOT NULL)
     AND NOT EXISTS (SELECT 1 FROM tasks t
                      WHERE t.id BETWEEN b.first_task_id AND b.last_task_id AND t.batch_id = b.id
                        AND t.id NOT IN (SELECT id FROM gone))
), flows_gone AS (
  DELETE FROM flows f
   WHERE f.id IN (SELECT flow_id FROM gone WHERE flow_id IS NOT NULL)
     AND NOT EXISTS (SELECT 1 FROM tasks t
                      WHERE t.id BETWEEN f.first_task_id AND f.last_task_id AND t.flow_id = f.id
                        AND t.id NOT IN (SELECT id FROM gone))
  RETURNING f.id
), keys_gone AS (
  DELETE FROM flow_keys k WHERE k.flow_id = ANY (ARRAY(SELECT id FROM flows_gone))
)
SELECT count(*) AS deleted FROM gone;

-- name: get_task
SELECT * FROM tasks WHERE id = :id;

-- name: task_state
SELECT state FROM tasks WHERE id = :id;

-- name: task_history
-- :id, :after the event id the previous page ended with (null: from the first), :most rows.
SELECT event_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail
  FROM task_events WHERE task_id = :id AND (:after::bigint IS NULL OR event_id > :after)
 ORDER BY event_id
 LIMIT :most;

-- name: list_tasks
-- :state, :queue, :type, :after after (exclusive; pages go newest first), :most limit, :scan the
-- most tasks one page reads, :ranges the most ranges of ids it reads, :max_inline and :max_page as
-- taskline_weighed (000024) takes them: a task's payload, result and error are left out past them,
-- with their sizes. A page of 200 tasks of 16 MB each is not 3 GB.
-- Bounded: the page's window is read by taskline_list_window (000031), a range of ids at a time
-- (each unit's, 000030), at most :scan tasks whatever the filters match; a filter that matches few
-- tasks of a big journal (or none) answers at once with what the window held and scanned_to, where
-- the next page goes on. :tables, from the state, names the tables to read (JournalReads.tables:
-- unfinished, finished, or the failed tasks' own index), which prunes the others.
WITH w AS MATERIALIZED (
  SELECT * FROM taskline_list_window(:after, :tables, :state, :queue, :type, NULL, :most, :scan, :ranges)
)
SELECT (SELECT max(scanned_to::text)::uuid FROM w) AS scanned_to, p.*
  FROM (SELECT 1) one
  LEFT JOIN LATERAL (
    SELECT (x.task).*, x.payload_bytes, x.result_bytes, x.error_bytes, x.shown, x.ord
      FROM taskline_weighed(ARRAY(SELECT id FROM w WHERE id IS NOT NULL), :max_inline, :max_page) x) p ON true
 ORDER BY p.ord;

-- name: list_tenant_tasks
-- As list_tasks, of one tenant (:tenant): each range is read through that tenant's index (000006,
-- and each table's of 000030), and the window of :scan is of that tenant's tasks.
WITH w AS MATERIALIZED (
  SELECT * FROM taskline_list_window(:after, :tables, :state, :queue, :type, :tenant, :most, :scan, :ranges)
)
SELECT (SELECT max(scanned_to::text)::uuid FROM w) AS scanned_to, p.*
  FROM (SELECT 1) one
  LEFT JOIN LATERAL (
    SELECT (x.task).*, x.payload_bytes, x.result_bytes, x.error_bytes, x.shown, x.ord
      FROM taskline_weighed(ARRAY(SELECT id FROM w WHERE id IS NOT NULL), :max_inline, :max_page) x) p ON true
 ORDER BY p.ord;

-- name: tenant_counts
-- :tenant, :now: what a tenant's key sees of the queues, from its tasks alone (000006's index).
SELECT queue,
       count(*) FILTER (WHERE state = 'pending' AND run_at <= :now) AS waiting,
       count(*) FILTER (WHERE state = 'pending' AND run_at > :now) AS scheduled,
       count(*) FILTER (WHERE state = 'running') AS running,
       count(*) FILTER (WHERE state IN ('succeeded', 'failed', 'cancelled', 'expired')) AS finished,
       count(*) FILTER (WHERE state = 'expired') AS expired,
       count(*) AS accepted
  FROM tasks
 WHERE tenant = :tenant
 GROUP BY queue;

-- name: get_batch
SELECT id, size, created_at FROM batches WHERE id = :id;

-- name: batch_tasks
-- :id, :max_inline and :max_page as for list_tasks. The batch's id range, then its tasks within it
-- (see migration 000004), weighed as a list's are.
SELECT (w.task).*, w.payload_bytes, w.result_bytes, w.error_bytes, w.shown
  FROM taskline_weighed(ARRAY(SELECT t.id FROM batches b
                                JOIN tasks t ON t.id BETWEEN b.first_task_id AND b.last_task_id
                               WHERE b.id = :id AND t.batch_id = :id
                               ORDER BY t.id), :max_inline, :max_page) w
 ORDER BY w.ord;

-- name: ping
SELECT 1;

-- name: secret_put
-- :name, :secret a new random secret, :now. Keeps the one already there.
INSERT INTO node_secrets (name, secret, created_at) VALUES (:name, :secret, :now) ON CONFLICT (name) DO NOTHING;

-- name: secret_get
SELECT secret FROM node_secrets WHERE name = :name;

-- name: lease_states
-- :ids task ids. Who holds each task now, for a node to let go of remote tasks that ended
-- elsewhere.
SELECT id, state, lease_version, worker_id FROM tasks WHERE id = ANY (:ids::uuid[]);
