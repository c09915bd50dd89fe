-- A journal a year old, written straight into PostgreSQL (not through the API), for the figures of
-- issue 45: finished tasks spread over :days days with about four events each, failed ones, and a
-- backlog of pending ones over :tenants tenants, in the schema of this release. Rows are made by the
-- server itself (INSERT ... SELECT over generate_series, in chunks of :chunk tasks, each committed),
-- which writes faster than COPY from a client: nothing crosses the socket.
--
--   psql "postgresql://postgres@127.0.0.1:PORT/postgres" -f load-tests/seed-journal.sql \
--        -v tasks=50000000 -v failed=10000 -v pending=1000000 -v tenants=100 -v days=365 \
--        -v queue=default -v pending_queue=default
--
-- Every variable has the default shown (chunk: 1000000; interval_ms: 86400000, the length of the
-- journal's units, as the node's retention.partitionIntervalMs). Run it on a journal a node has migrated
-- (start the node once), with the node stopped or not: the rows are ordinary rows, ids are UUIDv7
-- of their creation time (all in the past, below any id a node makes now), and the node reads them
-- as it reads its own. Pending tasks count against their queue's capacity as they would: seed them
-- into a queue whose capacity holds them, or a queue of their own, and measure another. Flows,
-- steps and signals are not seeded.
\set ON_ERROR_STOP on
\if :{?tasks} \else \set tasks 50000000 \endif
\if :{?failed} \else \set failed 10000 \endif
\if :{?pending} \else \set pending 1000000 \endif
\if :{?tenants} \else \set tenants 100 \endif
\if :{?days} \else \set days 365 \endif
\if :{?queue} \else \set queue default \endif
\if :{?pending_queue} \else \set pending_queue default \endif
\if :{?chunk} \else \set chunk 1000000 \endif
\if :{?interval_ms} \else \set interval_ms 86400000 \endif

-- The units the seeded tasks fall in (migration 000030), from the first seeded day to the day after
-- today: a finished task goes to its unit's tables as the node's would.
SELECT taskline_units_make(now() - make_interval(days => :days) - make_interval(secs => :interval_ms / 1000.0),
                           now() + make_interval(secs => 2 * :interval_ms / 1000.0), :interval_ms) AS units_made;

-- psql does not put its variables into a dollar-quoted body: they reach the block as settings.
SELECT set_config('seed.tasks', :'tasks', false), set_config('seed.failed', :'failed', false),
       set_config('seed.pending', :'pending', false), set_config('seed.tenants', :'tenants', false),
       set_config('seed.days', :'days', false), set_config('seed.queue', :'queue', false),
       set_config('seed.pending_queue', :'pending_queue', false), set_config('seed.chunk', :'chunk', false)
\gset ignored_

DO $$
DECLARE
  finished bigint := current_setting('seed.tasks')::bigint;
  failed   bigint := current_setting('seed.failed')::bigint;
  pending  bigint := current_setting('seed.pending')::bigint;
  tenants  int    := current_setting('seed.tenants')::int;
  days     int    := current_setting('seed.days')::int;
  q        text   := current_setting('seed.queue');
  pq       text   := current_setting('seed.pending_queue');
  chunk    bigint := current_setting('seed.chunk')::bigint;
  total    bigint;
  -- Creation times run from :days ago to a minute ago, in the order of the rows (so of their ids).
  first_ms bigint := (extract(epoch FROM now() - make_interval(days => days)) * 1000)::bigint;
  span_ms  bigint := days::bigint * 86400000 - 60000;
  done     bigint := 0;
  n        bigint;
  started  timestamptz := clock_timestamp();
BEGIN
  IF finished < 0 OR failed < 0 OR pending < 0 OR tenants < 1 OR days < 1 OR chunk < 1
     OR finished + failed + pending > 1000000000 THEN
    RAISE EXCEPTION 'seed: counts must be from 0 (at most 10^9 tasks in all), tenants, days and chunk at least 1';
  END IF;
  total := finished + failed + pending;
  -- Row i of all: finished first (the oldest), then failed, then pending (the newest).
  WHILE done < total LOOP
    n := least(chunk, total - done);
    CREATE TEMP TABLE seed_rows ON COMMIT DROP AS
      SELECT i,
             CASE WHEN i < finished THEN 'succeeded' WHEN i < finished + failed THEN 'failed' ELSE 'pending' END AS state,
             to_timestamp((first_ms + (i * span_ms) / greatest(total, 1)) / 1000.0) AS created,
             (lpad(to_hex(first_ms + (i * span_ms) / greatest(total, 1)), 12, '0') || '70008'
                || lpad(to_hex(i), 15, '0'))::uuid AS id,
             -- Every second finished task failed once first and was retried.
             CASE WHEN i < finished AND i % 2 = 0 THEN 2 WHEN i < finished + failed THEN 3 ELSE 1 END AS attempts
        FROM generate_series(done, done + n - 1) AS g(i);
    INSERT INTO tasks (id, queue, type, state, payload, result, error, priority, run_at, attempt, max_attempts,
                       lease_version, tenant, created_at, updated_at, started_at, finished_at)
    SELECT s.id, CASE WHEN s.state = 'pending' THEN pq ELSE q END, 'type-' || (s.i % 20), s.state,
           jsonb_build_object('n', s.i, 'tenant', s.i % tenants),
           CASE WHEN s.state = 'succeeded' THEN jsonb_build_object('ok', true, 'n', s.i) END,
           CASE WHEN s.state = 'failed'
                THEN jsonb_build_object('type', 'IllegalStateException', 'message', 'seeded failure ' || s.i) END,
           0, s.created,
           CASE WHEN s.state = 'pending' THEN 0 ELSE s.attempts END,
           3,
           CASE WHEN s.state = 'pending' THEN 0 ELSE s.attempts END,
           't' || lpad((s.i % tenants)::text, 3, '0'),
           s.created,
           s.created + CASE WHEN s.state = 'pending' THEN interval '0' ELSE interval '10 ms' END,
           CASE WHEN s.state = 'pending' THEN NULL ELSE s.created + interval '2 ms' END,
           CASE WHEN s.state = 'pending' THEN NULL ELSE s.created + interval '10 ms' END
      FROM seed_rows s;
    -- A task's events in the order they happened (the lateral rows of one task come together, so
    -- event ids follow them): submitted; then per attempt claimed and its end.
    INSERT INTO task_events (task_id, from_state, to_state, reason, worker_id, lease_version, attempt, at, detail)
    SELECT s.id, e.from_state, e.to_state, e.reason, e.worker_id,
           -- The end's lease version and attempt are the last attempt's.
           CASE WHEN e.k >= 7 THEN s.attempts ELSE e.lease_version END,
           CASE WHEN e.k >= 7 THEN s.attempts ELSE e.attempt END,
           s.created + e.after, e.detail
      FROM seed_rows s
     CROSS JOIN LATERAL (VALUES
             (1, 1, NULL::text, 'pending', 'submitted', NULL::text, 0, 0, interval '0', NULL::jsonb),
             (2, 1, 'pending', 'running', 'claimed', 'seed-worker', 1, 1, interval '2 ms', NULL),
             (3, 2, 'running', 'pending', 'retry_scheduled', 'seed-worker', 1, 1, interval '4 ms',
                 jsonb_build_object('type', 'IOException', 'message', 'seeded retry')),
             (4, 2, 'pending', 'running', 'claimed', 'seed-worker', 2, 2, interval '6 ms', NULL),
             (5, 3, 'running', 'pending', 'retry_scheduled', 'seed-worker', 2, 2, interval '7 ms',
                 jsonb_build_object('type', 'IOException', 'message', 'seeded retry')),
             (6, 3, 'pending', 'running', 'claimed', 'seed-worker', 3, 3, interval '8 ms', NULL),
             (7, 0, 'running', 'succeeded', 'succeeded', 'seed-worker', 0, 0, interval '10 ms', NULL),
             (8, 0, 'running', 'failed', 'failed_permanently', 'seed-worker', 0, 0, interval '10 ms',
                 jsonb_build_object('type', 'IllegalStateException', 'message', 'seeded failure')))
           AS e(k, needs, from_state, to_state, reason, worker_id, lease_version, attempt, after, detail)
     WHERE (s.state = 'pending' AND e.k = 1)
        OR (s.state <> 'pending' AND e.needs BETWEEN 1 AND s.attempts)
        OR (e.k = 7 AND s.state = 'succeeded') OR (e.k = 8 AND s.state = 'failed')
     ORDER BY s.i, e.k;
    COMMIT;
    done := done + n;
    RAISE NOTICE 'seeded % of % tasks (% s)', done, total, round(extract(epoch FROM clock_timestamp() - started));
  END LOOP;
END;
$$;

ANALYZE tasks;
ANALYZE task_events;
SELECT state, count(*) FROM tasks GROUP BY state ORDER BY state;
