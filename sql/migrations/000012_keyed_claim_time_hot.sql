-- 000012: 000011's index made updated_at an indexed column, and PostgreSQL then takes no update
-- that writes updated_at as a HOT update, on any task: progress reports, which write nothing else
-- that is indexed, lost it for every task, keyed or not. A keyed claim now reads its key's latest
-- end (finished_at, written only with a change of state, which is never HOT anyway) and takes its
-- own time after the key's lock is held (claim_keyed, Journal.claimKeyed).
DROP INDEX tasks_key_updated;
CREATE INDEX tasks_key_finished ON tasks (queue, concurrency_key, finished_at)
  WHERE concurrency_key IS NOT NULL;
