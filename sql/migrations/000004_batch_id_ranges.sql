-- 000004: a batch's tasks are found by id range, not by an index on batch_id. Task ids are UUIDv7
-- (time-ordered), so the tasks of one batch lie between its smallest and largest id, and the
-- primary key serves "tasks of batch b" as a short range scan filtered on batch_id. The index on
-- batch_id took an entry at every transition of every batch task (no update of tasks is HOT), a
-- seventh of the journal's writes in the throughput benchmark.
ALTER TABLE batches ADD COLUMN first_task_id uuid, ADD COLUMN last_task_id uuid;

-- uuid's text form orders like its bytes under the C collation (a numeric-aware collation would
-- not), and min/max exist for text.
--
-- Nodes of an earlier version must be stopped before this runs: they would write batches without
-- a range, whose tasks the range lookups then cannot find.
UPDATE batches b
   SET first_task_id = r.first_id, last_task_id = r.last_id
  FROM (SELECT batch_id, min(id::text COLLATE "C")::uuid AS first_id, max(id::text COLLATE "C")::uuid AS last_id
          FROM tasks WHERE batch_id IS NOT NULL GROUP BY batch_id) r
 WHERE r.batch_id = b.id;

DROP INDEX tasks_batch;
