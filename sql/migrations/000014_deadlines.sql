-- 000014: deadlines. A task may have to start by a time (startBy, or startWithinMs from when it is
-- due); one that has not started by then ends 'expired' instead of running late. The deadline
-- holds for the first start only: once a counted attempt has been made (attempt > 0) it no longer
-- applies, so a retry after a failure is not expired. Claims refuse a task past it (claim,
-- claim_gated); the sweep (expire_overdue) ends those left pending.
ALTER TABLE tasks ADD COLUMN start_by timestamptz;

ALTER TABLE tasks DROP CONSTRAINT tasks_state_known;
ALTER TABLE tasks ADD CONSTRAINT tasks_state_known
  CHECK (state IN ('pending', 'running', 'succeeded', 'failed', 'cancelled', 'expired'));

-- The sweep reads the deadlines of tasks that could still expire, soonest first: pending and never
-- started. Only those have an entry, so a task without a deadline, or one that has started, costs
-- its transitions nothing here. The predicate says "pending" as "not finished" (a task in no other
-- state has finished_at null and attempt 0: a claim counts an attempt), not as state = 'pending':
-- a sweep that named the state could be served by tasks_pending_order as well, and with statistics
-- from before a burst of submissions the planner takes that one, reading every waiting task of the
-- journal each pass (JournalPlansTest).
CREATE INDEX tasks_pending_start_by ON tasks (start_by)
  WHERE start_by IS NOT NULL AND attempt = 0 AND finished_at IS NULL;
