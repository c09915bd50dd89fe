-- 000015: schedules. A schedule is a definition (spec: cron or every, time zone, the task, overlap,
-- catchUp; as the API took it) that never changes once made: pause and resume are its only edits,
-- so that every node evaluates the same ticks. Each decided tick is a row of schedule_ticks, keyed
-- by schedule and tick time, inserted in the transaction that inserts the tick's task: whichever
-- node inserts it first fires the tick, the others' inserts conflict and change nothing. A tick is
-- fired (its task's id) or skipped (its reason: overlap, a full queue, missed while no node ran).
-- The newest row of a schedule is where every node takes up its ticks after a restart.
CREATE TABLE schedules (
  id            uuid        PRIMARY KEY,
  name          text        NOT NULL UNIQUE,
  spec          jsonb       NOT NULL,
  origin        text        NOT NULL CHECK (origin IN ('api', 'config')),
  paused        boolean     NOT NULL DEFAULT false,
  created_at    timestamptz NOT NULL,
  -- when it was last paused or resumed: no tick at or before a resume is owed
  changed_at    timestamptz NOT NULL,
  changed_by    text
);

CREATE TABLE schedule_ticks (
  schedule_id uuid        NOT NULL REFERENCES schedules (id) ON DELETE CASCADE,
  tick_at     timestamptz NOT NULL,
  outcome     text        NOT NULL CHECK (outcome IN ('fired', 'skipped')),
  task_id     uuid,
  reason      text,
  detail      text,
  -- how many ticks this row stands for: 1, or for a run of missed ticks, the run's length (only
  -- its newest tick gets a row); counted rather than kept on the schedule, which no tick writes
  ticks       bigint      NOT NULL DEFAULT 1 CHECK (ticks > 0),
  decided_at  timestamptz NOT NULL,
  decided_by  text,
  PRIMARY KEY (schedule_id, tick_at),
  CHECK ((outcome = 'fired') = (task_id IS NOT NULL))
);

-- A scheduled task names its schedule and tick; null for every other task.
ALTER TABLE tasks ADD COLUMN schedule text, ADD COLUMN scheduled_for timestamptz;

-- What a schedule's view adds up: its skipped ticks are few, and found without its fired ones.
CREATE INDEX schedule_ticks_skipped ON schedule_ticks (schedule_id, tick_at) WHERE outcome = 'skipped';
