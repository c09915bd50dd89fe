-- 000013: rate limits. A claim of a rate-limited queue journals here how many tasks of one budget it
-- started, and when: the budget is the queue's, or with perKey a concurrency key's ('' stands for the
-- queue, and under perKey for the tasks without a key; a key is never empty). A claim on any node
-- counts its budget's starts of the last window under the budget's lock, in the transaction that
-- starts its tasks (claim_gated), and deletes the entries two windows old, so the table holds
-- about two windows of entries per budget (the retention job deletes the rest, of budgets no claim
-- touches any more). Queues without a limit never touch it.
CREATE TABLE rate_starts (
  queue  text        NOT NULL,
  bucket text        NOT NULL,
  at     timestamptz NOT NULL,
  n      integer     NOT NULL CHECK (n > 0)
);
CREATE INDEX rate_starts_window ON rate_starts (queue, bucket, at);
