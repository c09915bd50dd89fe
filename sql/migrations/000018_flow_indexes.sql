-- 000018: the flows' indexes, made to cost their tasks' transitions nothing.
--
-- A flow task's key is unique in its flow. As a unique index on tasks (000017), each of a flow
-- task's transitions wrote an entry to it, for a key that never changes: updates that change the
-- state are never HOT (the state is in partial indexes), so every index with an entry for the row
-- gets a new one. A chord of 10,000 paid a fifth more per claim and finish than a batch did. The
-- keys live in a table of their own instead, written once, with the flow and with what a task
-- spawns into it; only the uniqueness is kept there (no statement looks a task up by its key).
CREATE TABLE flow_keys (
  flow_id uuid NOT NULL,
  key     text NOT NULL,
  PRIMARY KEY (flow_id, key)
);
INSERT INTO flow_keys (flow_id, key) SELECT flow_id, flow_key FROM tasks WHERE flow_id IS NOT NULL;
DROP INDEX tasks_flow_key;

-- A tenant's blocked flow tasks count against each queue's tenantLimit, as its waiting and running
-- ones do. The blocked tasks are counted every few seconds (flows.maxBlocked reads the same count);
-- keyed by queue and tenant, the index answers both the total and the split from itself.
DROP INDEX tasks_blocked;
CREATE INDEX tasks_blocked ON tasks (queue, tenant) WHERE state = 'blocked';
