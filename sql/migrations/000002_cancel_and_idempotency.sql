-- 000002: task semantics. Cancellation of running tasks, idempotency keys.

-- A running task asked to stop. Its worker learns of it at once on the same node (event bus) or at
-- its next heartbeat on another; the attempt then ends as cancelled.
ALTER TABLE tasks ADD COLUMN cancel_requested boolean NOT NULL DEFAULT false;

-- One row per Idempotency-Key. The unique key, not a check-then-insert, decides which of two racing
-- requests creates the tasks; the loser reads the winner's answer.
CREATE TABLE idempotency_keys (
  key          text        PRIMARY KEY,
  request_hash text        NOT NULL,
  response     jsonb       NOT NULL,
  created_at   timestamptz NOT NULL,
  expires_at   timestamptz NOT NULL
);

CREATE INDEX idempotency_keys_expiry ON idempotency_keys (expires_at);
-- Retention deletes finished tasks by age.
CREATE INDEX tasks_finished_at ON tasks (finished_at) WHERE finished_at IS NOT NULL;
-- The dead-letter view and bulk retry read failed tasks by queue and type.
CREATE INDEX tasks_failed ON tasks (queue, type, id) WHERE state = 'failed';
