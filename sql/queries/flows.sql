-- Named queries on flows: graphs of tasks (migration 000017). A flow's tasks are rows of tasks like
-- any other; what makes them a flow is their flow_id, their key in it, and the edges between them.
-- The statements that end tasks (finish, cancel, expire_overdue in tasks.sql) settle the children
-- of the flow tasks they end through flow_settle, in the same statement.
-- A flow's id is made before its tasks' ids, on one node, and ids only grow there (UUIDv7, model.
-- TaskIds): "t.id > :id" costs nothing and lets the planner leave out every unit of the journal
-- older than the flow (000030), which a join on its id range cannot.

-- name: insert_flow
-- Flows, each all or nothing, several in one statement (their ends group-committed as new tasks
-- are): per flow :flow_ids, :names (or null), :tenants (or null), :sizes, :first_ids and :last_ids
-- its smallest and largest task id; :now; per task, the flows' tasks one after the other:
-- :task_flows its flow, :task_tenants its flow's tenant, :ids, :keys, :queues, :types, :payloads
-- (JSON text), :priorities, :run_at, :max_attempts, :timeout_ms, :worker_ids and :lease_expires_at
-- (a root dispatched at once, as insert_tasks does; null for the others), :concurrency_keys,
-- :start_by, :start_within_ms (a blocked task's deadline, counted from when it becomes pending: its
-- start_by is set then), :joins and :parents_left (null for a root); per edge: :edge_parents,
-- :edge_children. The flows, their roots pending (or claimed), the others blocked, the edges, the
-- keys, and each task's first event.
WITH flow AS (
  INSERT INTO flows (id, name, tenant, size, edges, unfinished, state, first_task_id, last_task_id, created_at)
  SELECT f.id, f.name, f.tenant, f.size, f.edges, f.size, 'running', f.first_id, f.last_id, :now
    FROM unnest(:flow_ids::uuid[], :names::text[], :tenants::text[], :sizes::int[], :edge_counts::int[],
                :first_ids::uuid[], :last_ids::uuid[]) AS f(id, name, tenant, size, edges, first_id, last_id)
), ins AS (
  INSERT INTO tasks (id, queue, type, state, payload, priority, run_at, max_attempts, timeout_ms,
                     created_at, updated_at, worker_id, lease_version, attempt, lease_expires_at, started_at,
                     tenant, concurrency_key, start_by, flow_id, flow_key, join_mode, parents_left, start_within_ms)
  SELECT r.id, r.queue, r.type,
         CASE WHEN r.parents_left IS NOT NULL THEN 'blocked' WHEN r.worker_id IS NULL THEN 'pending' ELSE 'running' END,
         r.payload::jsonb, r.priority, r.run_at, r.max_attempts, r.timeout_ms, :now, :now,
         r.worker_id, CASE WHEN r.worker_id IS NULL THEN 0 ELSE 1 END,
         CASE WHEN r.worker_id IS NULL THEN 0 ELSE 1 END, r.lease_expires_at,
         CASE WHEN r.worker_id IS NULL THEN NULL ELSE :now END, r.tenant, r.concurrency_key, r.start_by,
         r.flow_id, r.key, r.join_mode, r.parents_left, r.start_within_ms
    FROM unnest(:ids::uuid[], :task_flows::uuid[], :task_tenants::text[], :keys::text[], :queues::text[],
                :types::text[], :payloads::text[], :priorities::int[], :run_at::timestamptz[], :max_attempts::int[],
                :timeout_ms::bigint[], :worker_ids::text[], :lease_expires_at::timestamptz[], :concurrency_keys::text[],
                :start_by::timestamptz[], :start_within_ms::bigint[], :joins::text[], :parents_left::int[])
         AS r(id, flow_id, tenant, key, queue, type, payload, priority, run_at, max_attempts, timeout_ms, worker_id,
              lease_expires_at, concurrency_key, start_by, start_within_ms, join_mode, parents_left)
  RETURNING id, state, worker_id
), edges AS (
  INSERT INTO task_edges (parent_id, child_id)
  SELECT * FROM unnest(:edge_parents::uuid[], :edge_children::uuid[])
), keys AS (
  INSERT INTO flow_keys (flow_id, key) SELECT * FROM unnest(:task_flows::uuid[], :keys::text[])
)
INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at)
SELECT id, NULL, CASE WHEN state = 'blocked' THEN 'blocked' ELSE 'pending' END, 'submitted', NULL, 0, 0, :now FROM ins
UNION ALL
SELECT id, 'pending', 'running', 'claimed', worker_id, 1, 1, :now FROM ins WHERE worker_id IS NOT NULL;

-- name: flow_parents
-- :id a task, :max_bytes the most its parents' results and errors may weigh together. What its
-- parents in its flow ended with, for its handler to read when it starts, in one row: how many,
-- how much they weigh (as text: what a reader decodes, however well the journal compressed it), and, unless that is more than :max_bytes, a JSON object of
-- each parent's key to its result (or, for one that did not succeed, its error) and one of each
-- key to its state. One row of text rather than a row a parent: a fan-in of 10,000 costs the
-- reader one value to pass on or decode, not 10,000 rows.
WITH p AS MATERIALIZED (
  SELECT t.flow_key, t.state, CASE WHEN t.state = 'succeeded' THEN t.result ELSE t.error END AS value,
         COALESCE(octet_length(t.result::text), 0) + COALESCE(octet_length(t.error::text), 0) AS bytes
    -- Each parent a probe by key (see flow_tasks): a chord's edges make the planner expect thousands.
    FROM task_edges e
    CROSS JOIN LATERAL (SELECT x.flow_key, x.state, x.result, x.error FROM tasks x WHERE x.id = e.parent_id OFFSET 0) t
   WHERE e.child_id = :id
), total AS (
  SELECT count(*)::int AS parents, COALESCE(sum(bytes), 0)::bigint AS bytes FROM p
)
SELECT total.parents, total.bytes,
       CASE WHEN total.bytes <= :max_bytes
            THEN (SELECT json_object_agg(p.flow_key, p.value) FROM p)::text END AS parent_values,
       CASE WHEN total.bytes <= :max_bytes
            THEN (SELECT json_object_agg(p.flow_key, p.state) FROM p)::text END AS parent_states
  FROM total;

-- name: flow_parents_page
-- :id a task, :after the key the previous page ended with (null: the first page), :most rows,
-- :max_bytes the most its values may weigh together (the first is answered whatever it weighs).
-- A page of what its parents ended with, by key: each one's state and result (or, for one that
-- did not succeed, its error) as JSON text. Every row carries the child's tenant and queue (one
-- row with no parent when the page is empty; none when there is no such task) and how many
-- parents were fetched for the page, so that the reader knows whether the byte bound cut it.
WITH c AS (
  SELECT id, tenant, queue FROM tasks WHERE id = :id
), p AS MATERIALIZED (
  SELECT t.flow_key, t.state, CASE WHEN t.state = 'succeeded' THEN t.result ELSE t.error END::text AS value
    FROM c JOIN task_edges e ON e.child_id = c.id
    CROSS JOIN LATERAL (SELECT x.flow_key, x.state, x.result, x.error FROM tasks x WHERE x.id = e.parent_id OFFSET 0) t
   WHERE :after::text IS NULL OR t.flow_key > :after
   ORDER BY t.flow_key
   LIMIT :most
), w AS (
  SELECT p.*, row_number() OVER (ORDER BY p.flow_key) AS n,
         sum(COALESCE(octet_length(p.value), 0)) OVER (ORDER BY p.flow_key) AS upto
    FROM p
)
SELECT c.tenant, c.queue, (SELECT count(*) FROM p)::int AS fetched, w.flow_key, w.state, w.value
  FROM c LEFT JOIN w ON w.n = 1 OR w.upto <= :max_bytes
 ORDER BY w.n;

-- name: get_flow
SELECT * FROM flows WHERE id = :id;

-- name: flow_tasks
-- :id a flow, :after the task id the previous page ended with (null: the first page), :most rows,
-- :max_inline the most one result or error may weigh and still be shown, :max_page the most those
-- shown may weigh together. A page of its tasks (in its id range, see 000017), each with the keys it
-- depends on, and its result and error unless they weigh more than those allow (their sizes say
-- what was left out: the task's own read shows it).
WITH page AS (
  SELECT t.*, COALESCE(octet_length(t.result::text), 0) AS result_bytes,
         COALESCE(octet_length(t.error::text), 0) AS error_bytes
    FROM flows f JOIN tasks t ON t.id BETWEEN f.first_task_id AND f.last_task_id
   WHERE f.id = :id AND t.flow_id = :id AND (:after::uuid IS NULL OR t.id > :after) AND t.id > :id
   ORDER BY t.id
   LIMIT :most
), w AS (
  SELECT page.*,
         sum(CASE WHEN result_bytes + error_bytes <= :max_inline THEN result_bytes + error_bytes ELSE 0 END)
           OVER (ORDER BY page.id) AS upto
    FROM page
)
SELECT w.id, w.flow_key, w.queue, w.type, w.state, w.join_mode, w.attempt, w.tenant,
       w.result_bytes, w.error_bytes,
       CASE WHEN w.result_bytes + w.error_bytes <= :max_inline AND w.upto <= :max_page THEN w.result END AS result,
       CASE WHEN w.result_bytes + w.error_bytes <= :max_inline AND w.upto <= :max_page THEN w.error END AS error,
       -- Each parent a probe by key (OFFSET 0 keeps it from being flattened into a join): after a few
       -- chords, the statistics say a child has thousands of parents, and the planner hashed every
       -- task for each row of the page, past the statement timeout for a chain's page of 1,000.
       ARRAY(SELECT p.flow_key FROM task_edges e
               CROSS JOIN LATERAL (SELECT x.id, x.flow_key FROM tasks x WHERE x.id = e.parent_id OFFSET 0) p
              WHERE e.child_id = w.id ORDER BY p.id) AS depends_on
  FROM w
 ORDER BY w.id;

-- name: flow_state_counts
-- :id a flow. How many of its tasks are in each state.
SELECT t.state, count(*)::int AS n
  FROM flows f JOIN tasks t ON t.id BETWEEN f.first_task_id AND f.last_task_id
 WHERE f.id = :id AND t.flow_id = :id AND t.id > :id
 GROUP BY t.state;

-- name: list_flows
-- :state, :name, :after after (exclusive; pages go newest first), :most limit
SELECT * FROM flows
 WHERE (:state::text IS NULL OR state = :state)
   AND (:name::text IS NULL OR name = :name)
   AND (:after::uuid IS NULL OR id < :after)
 ORDER BY id DESC
 LIMIT :most;

-- name: list_tenant_flows
-- As list_flows, of one tenant (:tenant), through flows_by_tenant.
SELECT * FROM flows
 WHERE tenant = :tenant
   AND (:state::text IS NULL OR state = :state)
   AND (:name::text IS NULL OR name = :name)
   AND (:after::uuid IS NULL OR id < :after)
 ORDER BY tenant, id DESC
 LIMIT :most;

-- name: flow_task_ids
-- :id a flow, :states the states wanted. Its tasks in those states, for a cancel or retry of the
-- whole flow.
SELECT t.id FROM flows f JOIN tasks t ON t.id BETWEEN f.first_task_id AND f.last_task_id
 WHERE f.id = :id AND t.flow_id = :id AND t.state = ANY (:states::text[]) AND t.id > :id
 ORDER BY t.id;

-- name: flow_reblock
-- :ids tasks a retry just put back to pending, :now. Their flows' tasks that were cancelled
-- because of them (parent_failed, transitively) go back to blocked, waiting again for what their
-- join waits for, so that a flow resumes from the step that failed rather than from its start;
-- then the counters of each flow touched are counted anew from its tasks (a retry is rare, and
-- counting spares keeping a tally of which ends it undid). Answers the tasks put back.
WITH RECURSIVE down AS (
  SELECT e.child_id AS id FROM task_edges e WHERE e.parent_id = ANY (:ids::uuid[])
  UNION
  SELECT e.child_id FROM down JOIN task_edges e ON e.parent_id = down.id
    JOIN tasks c ON c.id = down.id
   WHERE c.state = 'cancelled'
), victims AS (
  SELECT c.id FROM down JOIN tasks c ON c.id = down.id
   WHERE c.state = 'cancelled'
     AND (SELECT ev.reason FROM task_events ev WHERE ev.task_id = c.id ORDER BY ev.event_id DESC LIMIT 1)
         = 'parent_failed'
   ORDER BY c.id
     FOR UPDATE OF c
), back AS (
  UPDATE tasks t
     SET state = 'blocked', finished_at = NULL, lease_version = t.lease_version + 1, updated_at = :now,
         parents_left = (SELECT count(*) FROM task_edges e JOIN tasks p ON p.id = e.parent_id
                          WHERE e.child_id = t.id
                            AND CASE t.join_mode
                                  WHEN 'settled' THEN p.finished_at IS NULL
                                  WHEN 'any' THEN p.state NOT IN ('failed', 'cancelled', 'expired')
                                  ELSE p.state <> 'succeeded' END)
    FROM victims v
   WHERE t.id = v.id
  RETURNING t.id, t.flow_id, t.lease_version, t.attempt
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, lease_version, attempt, at)
  SELECT id, 'cancelled', 'blocked', 'retried', lease_version, attempt, :now FROM back
)
SELECT id, flow_id FROM back;

-- name: flow_recount
-- :ids flows. Their counters and state counted anew from their tasks, after a retry.
WITH counts AS (
  SELECT f.id,
         count(*) FILTER (WHERE t.finished_at IS NULL)::int AS unfinished,
         count(*) FILTER (WHERE t.state IN ('failed', 'expired'))::int AS failed,
         count(*) FILTER (WHERE t.state = 'cancelled')::int AS cancelled
    FROM flows f JOIN tasks t ON t.id BETWEEN f.first_task_id AND f.last_task_id AND t.flow_id = f.id
   WHERE f.id = ANY (:ids::uuid[])
   GROUP BY f.id
)
UPDATE flows f
   SET unfinished = c.unfinished, failed = c.failed, cancelled = c.cancelled,
       state = CASE WHEN c.unfinished > 0 THEN 'running' WHEN c.failed > 0 THEN 'failed'
                    WHEN c.cancelled > 0 THEN 'cancelled' ELSE 'succeeded' END,
       finished_at = CASE WHEN c.unfinished > 0 THEN NULL ELSE f.finished_at END
  FROM counts c
 WHERE f.id = c.id
RETURNING f.id, f.state;

-- name: flow_lock
-- :ids flows, locked in id order (as flow_settle locks them) before flow_recount counts them.
SELECT id FROM flows WHERE id = ANY (:ids::uuid[]) ORDER BY id FOR UPDATE;

-- name: blocked_count
-- How many tasks wait blocked, in the whole journal, by queue and tenant (null: none), from the
-- index tasks_blocked alone (000018).
SELECT queue, tenant, count(*) AS blocked FROM tasks WHERE state = 'blocked' GROUP BY queue, tenant;

-- name: flow_spawn
-- :spawner the running task that spawns, :lease_version and :worker_id its lease, :now, :flow_id
-- its flow; per spawned task: :ids, :keys, :queues, :types, :payloads, :priorities, :delays_ms
-- (its delay, counted from when it becomes pending), :max_attempts, :timeout_ms,
-- :concurrency_keys, :start_within_ms, :joins, :parents_left (each waits for the spawner and for
-- what its dependsOn names); per edge: :edge_parents, :edge_children (from the spawner, and among the
-- spawned); :tails the spawned tasks that the spawner's dependents must also wait for. Fenced as
-- finish is: nothing is written unless the spawner is still running under that lease, locked here
-- until the finish that follows in the same transaction commits its success. The spawned tasks are
-- journaled blocked; that finish settles them (its success lets those that wait only for it run).
-- A key already in the flow breaks flow_keys' primary key (the whole transaction fails, nothing is
-- kept).
--
-- The flow's budget holds whatever made its tasks: nothing is written either when the flow would
-- then hold more than :max_tasks tasks or :max_edges edges (the tail edges count: each dependent of
-- the spawner waits for every tail, so they multiply), or a dependent would wait for more than
-- :max_parents parents. The flow's row is locked for the count, so that two spawns in one flow
-- cannot both pass it. One row: spawned (0 when nothing was written), held (whether the lease was),
-- and what the flow would come to (size, edges, parents: the most parents a dependent would have).
WITH spawner AS (
  SELECT t.id, t.tenant FROM tasks t
   WHERE t.id = :spawner AND t.state = 'running' AND t.worker_id = :worker_id
     AND t.lease_version = :lease_version AND t.lease_expires_at > :now
     FOR UPDATE
), dependents AS (
  SELECT d.id FROM spawner, task_edges g JOIN tasks d ON d.id = g.child_id
   WHERE g.parent_id = :spawner AND d.state = 'blocked'
   ORDER BY d.id
     FOR UPDATE OF d
), flow AS (
  SELECT f.size, f.edges FROM spawner, flows f WHERE f.id = :flow_id FOR UPDATE OF f
), budget AS (
  SELECT f.size + cardinality(:ids::uuid[]) AS size,
         f.edges::bigint + cardinality(:edge_parents::uuid[])
           + cardinality(:tails::uuid[])::bigint * (SELECT count(*) FROM dependents) AS edges,
         COALESCE((SELECT max((SELECT count(*) FROM task_edges p WHERE p.child_id = x.id)) FROM dependents x), 0)
           + cardinality(:tails::uuid[]) AS parents
    FROM flow f
), ok AS (
  SELECT 1 FROM budget b
   WHERE b.size <= :max_tasks AND b.edges <= :max_edges AND b.parents <= :max_parents
), ins AS (
  INSERT INTO tasks (id, queue, type, state, payload, priority, run_at, max_attempts, timeout_ms, created_at,
                     updated_at, lease_version, attempt, tenant, concurrency_key, flow_id, flow_key, join_mode,
                     parents_left, start_within_ms)
  SELECT r.id, r.queue, r.type, 'blocked', r.payload::jsonb, r.priority, :now + r.delay_ms * interval '1 millisecond',
         r.max_attempts, r.timeout_ms, :now, :now, 0, 0, s.tenant, r.concurrency_key, :flow_id, r.key, r.join_mode,
         r.parents_left, r.start_within_ms
    FROM spawner s, ok,
         unnest(:ids::uuid[], :keys::text[], :queues::text[], :types::text[], :payloads::text[], :priorities::int[],
                :delays_ms::bigint[], :max_attempts::int[], :timeout_ms::bigint[], :concurrency_keys::text[],
                :start_within_ms::bigint[], :joins::text[], :parents_left::int[])
         AS r(id, key, queue, type, payload, priority, delay_ms, max_attempts, timeout_ms, concurrency_key,
              start_within_ms, join_mode, parents_left)
  RETURNING id
), edges AS (
  INSERT INTO task_edges (parent_id, child_id)
  SELECT e.parent_id, e.child_id FROM spawner, ok, unnest(:edge_parents::uuid[], :edge_children::uuid[]) AS e(parent_id, child_id)
), keys AS (
  INSERT INTO flow_keys (flow_id, key) SELECT :flow_id, k.key FROM spawner, ok, unnest(:keys::text[]) AS k(key)
), wait_more AS (
  UPDATE tasks d SET parents_left = d.parents_left + cardinality(:tails::uuid[]), updated_at = :now
    FROM dependents x, ok
   WHERE d.id = x.id
), tail_edges AS (
  INSERT INTO task_edges (parent_id, child_id)
  SELECT tail.id, x.id FROM dependents x, ok, unnest(:tails::uuid[]) AS tail(id)
), grown AS (
  UPDATE flows f
     SET size = b.size, edges = b.edges, unfinished = f.unfinished + cardinality(:ids::uuid[]),
         last_task_id = GREATEST(f.last_task_id, (SELECT i.id FROM unnest(:ids::uuid[]) AS i(id) ORDER BY i.id DESC LIMIT 1))
    FROM budget b, ok
   WHERE f.id = :flow_id
), ev AS (
  INSERT INTO task_events (task_id, from_state, to_state, reason, lease_version, attempt, at, detail)
  SELECT id, NULL, 'blocked', 'submitted', 0, 0, :now, jsonb_build_object('spawnedBy', :spawner::text) FROM ins
)
SELECT (SELECT count(*)::int FROM ins) AS spawned, EXISTS (SELECT 1 FROM spawner) AS held,
       b.size, b.edges, b.parents
  FROM (SELECT 1) AS one LEFT JOIN budget b ON true;

-- name: task_flow
-- :id a task: its flow, its key there and its tenant, for what it spawns.
SELECT id, queue, type, flow_id, flow_key, tenant FROM tasks WHERE id = :id;
