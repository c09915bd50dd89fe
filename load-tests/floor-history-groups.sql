-- pgbench script: the claimed-in-insert write set (insert running, then finish) with history as
-- one row per statement that keeps what a task's history shows today (per-task states, reasons,
-- workers, lease versions and attempts as arrays), and each task's list of its event groups in
-- its own row, which a task's history and a stream's resume would read; each task event keeps an
-- id of its own from the events' sequence, as stream cursors need. 100 tasks per run.
-- Set-up, on a scratch database with the project's migrations applied:
--   CREATE TABLE event_groups2 (group_id bigint PRIMARY KEY, at timestamptz NOT NULL, from_state text,
--     task_ids uuid[] NOT NULL, to_states text[] NOT NULL, reasons text[] NOT NULL, worker_ids text[],
--     lease_versions bigint[] NOT NULL, attempts int[] NOT NULL, details jsonb[], event_ids bigint[]);
--   ALTER TABLE tasks ADD COLUMN event_groups bigint[]; CREATE SEQUENCE ev_seq;
-- Run: pgbench -n -c 4 -j 2 -T 20 -f load-tests/floor-history-groups.sql <db>  (tasks/s = tps x 100),
-- after TRUNCATE tasks, event_groups2. Figures in load-tests/README.md, section 12.
\set b random(1, 2000000000)
WITH ids AS (SELECT md5(:b::text || '-' || g)::uuid AS id FROM generate_series(1, 100) g),
g AS (SELECT nextval('ev_seq') AS sub, nextval('ev_seq') AS clm),
ins AS (INSERT INTO tasks (id, queue, type, state, payload, priority, run_at, attempt, max_attempts, worker_id, lease_version, lease_expires_at, created_at, updated_at, started_at, event_groups)
        SELECT id, 'bench', 'sleep', 'running', '{"ms":0}'::jsonb, 0, now(), 1, 3, 'node/bench', 1, now() + interval '30 s', now(), now(), now(), ARRAY[g.sub, g.clm] FROM ids, g RETURNING id, worker_id)
INSERT INTO event_groups2 (group_id, at, from_state, task_ids, to_states, reasons, worker_ids, lease_versions, attempts, event_ids)
SELECT g.sub, now(), NULL, array_agg(id), array_agg('pending'::text), array_agg('submitted'::text), NULL, array_agg(0::bigint), array_agg(0), array_agg(nextval('task_events_event_id_seq')) FROM ins, g GROUP BY g.sub
UNION ALL
SELECT g.clm, now(), 'pending', array_agg(id), array_agg('running'::text), array_agg('claimed'::text), array_agg(worker_id), array_agg(1::bigint), array_agg(1), array_agg(nextval('task_events_event_id_seq')) FROM ins, g GROUP BY g.clm;
WITH ids AS (SELECT md5(:b::text || '-' || g)::uuid AS id FROM generate_series(1, 100) g),
g AS (SELECT nextval('ev_seq') AS fin),
upd AS (UPDATE tasks t SET state = 'succeeded', result = '{"sleptMs":0}', worker_id = NULL, lease_expires_at = NULL, updated_at = now(), finished_at = now(), event_groups = t.event_groups || g.fin
        FROM ids, g WHERE t.id = ids.id AND t.state = 'running' AND t.lease_version = 1 RETURNING t.id, t.lease_version, t.attempt, g.fin)
INSERT INTO event_groups2 (group_id, at, from_state, task_ids, to_states, reasons, worker_ids, lease_versions, attempts, event_ids)
SELECT fin, now(), 'running', array_agg(id), array_agg('succeeded'::text), array_agg('succeeded'::text), array_agg('node/bench'::text), array_agg(lease_version), array_agg(attempt), array_agg(nextval('task_events_event_id_seq')) FROM upd GROUP BY fin;
