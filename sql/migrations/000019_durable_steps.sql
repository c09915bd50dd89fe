-- 000019: durable steps. A task's handler journals what each named step returned, so that a later
-- run of the same task (a retry, a takeover, a resume) returns it without running the step again;
-- a handler that sleeps or waits ends its attempt suspended: back to pending, due at its wake time,
-- with the wait it is in on its row. No new state: a suspended task is pending.

-- The wait a suspended task is in ({"kind": "sleep"|"signal"|"event", "step", "name", "field",
-- "value", "until"}), set while its attempt ends and cleared when it is woken (its time came, its
-- signal or event arrived, a compensating cancel). Null for every other task.
ALTER TABLE tasks ADD COLUMN wait jsonb;
-- Resumed by a compensating cancel: its next runs see cancelled() and undo what they did; its
-- success ends it cancelled.
ALTER TABLE tasks ADD COLUMN compensating boolean NOT NULL DEFAULT false;

-- Suspended tasks stay out of the index that page-in walks: a hundred thousand sleepers older than
-- the queue's live work would otherwise be read past (and filtered on run_at) by every page-in and
-- every backlog count. page_in, page_in_fair and pending_count repeat the predicate.
DROP INDEX tasks_pending_order;
CREATE INDEX tasks_pending_order ON tasks (queue, priority DESC, created_at, id)
  WHERE state = 'pending' AND wait IS NULL;
-- The waker reads suspended tasks by wake time (a wait with no timeout wakes at the far future).
CREATE INDEX tasks_waiting ON tasks (run_at) WHERE state = 'pending' AND wait IS NOT NULL;
-- An event finds the tasks waiting for it by name and matched value, not by a scan of the waits.
CREATE INDEX tasks_event_waits ON tasks ((wait->>'name'), (wait->>'field'), (wait->>'value'))
  WHERE state = 'pending' AND wait->>'kind' = 'event';

-- One row per step reached. A step the handler ran is done when it is written. A wait step (a
-- sleep, a signal or event wait) is opened when the handler first suspends on it, with its
-- deadline (the first one kept, so that a resumed handler does not sleep again from the start),
-- and done when the node completes it: its time came, its signal or event was taken, or it timed
-- out. The first result written is the one kept.
CREATE TABLE task_steps (
  task_id  uuid        NOT NULL,
  name     text        NOT NULL,
  position bigint      GENERATED ALWAYS AS IDENTITY,
  done     boolean     NOT NULL,
  result   jsonb,
  until    timestamptz,
  wait     jsonb,
  attempt  integer     NOT NULL,
  at       timestamptz NOT NULL,
  PRIMARY KEY (task_id, name)
);

-- Signals sent to a task, and events delivered to it, kept until a wait of that name takes them
-- (one each, oldest first): a signal sent before the code waits for it is not lost.
CREATE TABLE task_signals (
  id       bigint      GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
  task_id  uuid        NOT NULL,
  kind     text        NOT NULL CHECK (kind IN ('signal', 'event')),
  name     text        NOT NULL,
  payload  jsonb       NOT NULL,
  at       timestamptz NOT NULL,
  taken_by text,
  -- The sender's Idempotency-Key: a signal sent again with it is the same signal.
  idempotency_key text
);
CREATE UNIQUE INDEX task_signals_idempotency ON task_signals (task_id, idempotency_key)
  WHERE idempotency_key IS NOT NULL;
CREATE INDEX task_signals_untaken ON task_signals (task_id, kind, name, id) WHERE taken_by IS NULL;
CREATE INDEX task_signals_by_task ON task_signals (task_id);

-- Events received, kept a day: an id seen again in that time answers as the first time did, and a
-- task whose attempt was running towards its wait when the event came finds it when it waits.
CREATE TABLE events (
  tenant text        NOT NULL,
  id     text        NOT NULL,
  name   text        NOT NULL,
  data   jsonb       NOT NULL,
  at     timestamptz NOT NULL,
  answer jsonb,
  PRIMARY KEY (tenant, id)
);
CREATE INDEX events_by_name ON events (name, at);
CREATE INDEX events_at ON events (at);

-- The fields tasks have waited on per event name: an event looks each up in tasks_event_waits.
CREATE TABLE event_fields (
  name  text NOT NULL,
  field text NOT NULL,
  PRIMARY KEY (name, field)
);
