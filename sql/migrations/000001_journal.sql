-- 000001: the journal. One row per task with its current state and lease, one row per transition.

CREATE TABLE tasks (
  id               uuid        PRIMARY KEY,   -- UUIDv7: time-ordered, so keyset pages follow age
  queue            text        NOT NULL,
  type             text        NOT NULL,
  state            text        NOT NULL,
  payload          jsonb       NOT NULL,
  result           jsonb,
  error            jsonb,
  progress_percent smallint,
  progress_message text,
  priority         integer     NOT NULL DEFAULT 0,
  run_at           timestamptz NOT NULL,
  attempt          integer     NOT NULL DEFAULT 0,
  max_attempts     integer     NOT NULL DEFAULT 1,
  timeout_ms       bigint,
  worker_id        text,
  lease_version    bigint      NOT NULL DEFAULT 0,
  lease_expires_at timestamptz,
  tenant           text,
  batch_id         uuid,
  idempotency_key  text,
  created_at       timestamptz NOT NULL,
  updated_at       timestamptz NOT NULL,
  started_at       timestamptz,
  finished_at      timestamptz,
  CONSTRAINT tasks_state_known CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'cancelled')),
  -- A running task always has an owner and a deadline; nothing else has a live lease.
  CONSTRAINT tasks_lease_only_when_running CHECK (
    (state = 'running') = (worker_id IS NOT NULL AND lease_expires_at IS NOT NULL)),
  CONSTRAINT tasks_progress_range CHECK (progress_percent IS NULL OR progress_percent BETWEEN 0 AND 100),
  CONSTRAINT tasks_attempts_sane CHECK (attempt >= 0 AND max_attempts >= 1)
);

-- Page-in reads waiting work of one queue in the order it must run.
CREATE INDEX tasks_pending_order ON tasks (queue, priority DESC, created_at, id) WHERE state = 'pending';
-- The sweeper reads leases by deadline.
CREATE INDEX tasks_running_lease ON tasks (lease_expires_at) WHERE state = 'running';
CREATE INDEX tasks_batch ON tasks (batch_id) WHERE batch_id IS NOT NULL;
CREATE INDEX tasks_state_id ON tasks (state, id);

CREATE TABLE batches (
  id         uuid        PRIMARY KEY,
  size       integer     NOT NULL CHECK (size >= 1),
  created_at timestamptz NOT NULL
);

-- Append-only history. No foreign key to tasks: it would lock the task row on every event insert
-- and slow the hot path; the retention job deletes a task's events with the task.
CREATE TABLE task_events (
  event_id      bigserial   PRIMARY KEY,
  task_id       uuid        NOT NULL,
  from_state    text,
  to_state      text        NOT NULL,
  reason        text        NOT NULL,
  worker_id     text,
  lease_version bigint,
  attempt       integer,
  at            timestamptz NOT NULL,
  detail        jsonb
);

CREATE INDEX task_events_by_task ON task_events (task_id, event_id);
