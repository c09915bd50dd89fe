-- Named queries of the journal's units (migration 000030): the tables of finished tasks and their
-- events, one per unit of time, made ahead and dropped whole past retention.

-- name: units_make
-- :from, :to the time the units must cover, :every_ms a unit's length. How many were made.
SELECT taskline_units_make(:from, :to, :every_ms) AS made;

-- name: units_due
-- :cutoff, :most: the units that ended before the cut-off and still have their tables, oldest first.
SELECT starts FROM journal_units WHERE dropped_at IS NULL AND ends <= :cutoff ORDER BY starts LIMIT :most;

-- name: unit_drop
-- :starts, :cutoff, :archive: null once the unit's tables are gone, else why they stay.
SELECT taskline_unit_drop(:starts, :cutoff, :archive) AS stays;

-- name: units_dropped
-- :most: units whose tables are gone and whose rows in other tables may not be, oldest first.
SELECT starts, lo, hi FROM journal_units WHERE dropped_at IS NOT NULL ORDER BY starts LIMIT :most;

-- name: unit_leftovers
-- :lo, :hi a dropped unit's task ids, :cutoff, :most most rows of each table: the rows of a dropped
-- unit's tasks in the tables that are not split by unit (their steps, signals, the edges to them),
-- and of the flows and batches made within it (every flow of the unit ended before the cut-off, or
-- the unit would not have gone: taskline_unit_drop), a bounded batch of each. Keys of flows that are
-- gone go too. A task of the unit that has not finished keeps its rows, and its batch its row: they
-- go with it, by delete_finished, once it ended. The count says whether a batch more is due.
WITH steps AS (
  DELETE FROM task_steps
   WHERE ctid = ANY (ARRAY(SELECT s.ctid FROM task_steps s
                            WHERE s.task_id >= :lo AND s.task_id < :hi
                              AND NOT EXISTS (SELECT 1 FROM tasks_live l WHERE l.id = s.task_id)
                            LIMIT :most))
  RETURNING 1
), signals AS (
  DELETE FROM task_signals
   WHERE ctid = ANY (ARRAY(SELECT g.ctid FROM task_signals g
                            WHERE g.task_id >= :lo AND g.task_id < :hi
                              AND NOT EXISTS (SELECT 1 FROM tasks_live l WHERE l.id = g.task_id)
                            LIMIT :most))
  RETURNING 1
), edges AS (
  DELETE FROM task_edges
   WHERE ctid = ANY (ARRAY(SELECT e.ctid FROM task_edges e
                            WHERE e.child_id >= :lo AND e.child_id < :hi
                              AND NOT EXISTS (SELECT 1 FROM tasks_live l WHERE l.id = e.child_id)
                            LIMIT :most))
  RETURNING 1
), batches_gone AS (
  DELETE FROM batches
   WHERE id = ANY (ARRAY(SELECT b.id FROM batches b
                      WHERE b.id >= :lo AND b.id < :hi
                        AND NOT EXISTS (SELECT 1 FROM tasks_live l
                                         WHERE l.id BETWEEN b.first_task_id AND b.last_task_id AND l.batch_id = b.id)
                      LIMIT :most))
  RETURNING 1
), flows_gone AS (
  DELETE FROM flows
   WHERE id = ANY (ARRAY(SELECT id FROM flows WHERE id >= :lo AND id < :hi AND finished_at < :cutoff LIMIT :most))
  RETURNING id
), keys_gone AS (
  DELETE FROM flow_keys
   WHERE ctid = ANY (ARRAY(SELECT k.ctid FROM flow_keys k
                            WHERE k.flow_id >= :lo AND k.flow_id < :hi
                              AND NOT EXISTS (SELECT 1 FROM flows f WHERE f.id = k.flow_id)
                            LIMIT :most))
  RETURNING 1
)
SELECT (SELECT count(*) FROM steps) + (SELECT count(*) FROM signals) + (SELECT count(*) FROM edges)
       + (SELECT count(*) FROM batches_gone) + (SELECT count(*) FROM flows_gone) + (SELECT count(*) FROM keys_gone)
       AS deleted;

-- name: unit_forget
-- :starts: a dropped unit none of whose rows are left.
DELETE FROM journal_units WHERE starts = :starts AND dropped_at IS NOT NULL;
