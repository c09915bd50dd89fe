-- 000028: the first of three steps to the partitioned journal (000030), taken while nodes of the
-- previous release may still serve the same journal.
--
-- Rows already written stay where they are: 000030 attaches today's tasks and task_events whole,
-- as partitions of the new tables for the rows created before a bound (journal_layout.legacy_until),
-- and only rows created from the bound on take the new layout. Attaching a table of millions of rows
-- without reading it under an exclusive lock needs a constraint that already proves the bound: added
-- here NOT VALID (no scan; it holds for every row written from now on), proven by 000029 without
-- blocking writes. The bound lies between one and two days ahead, time enough for 000029's scan of a
-- large journal; a node of the previous release writes rows created before it, and those go on being
-- the previous layout's rows after 000030. A journal with no task takes the bound back to the
-- beginning of time in 000030 and keeps nothing of the previous layout.
--
-- The exclusive lock an ALTER takes is held for milliseconds, but waiting for it queues every other
-- statement on the table behind it: half a second is the most this waits (the migrator tries
-- again), less than PostgreSQL's deadlock_timeout, so that a writer that holds one of the tables and
-- wants the other is never the one a deadlock check ends.
SET LOCAL lock_timeout = '500ms';

CREATE TABLE journal_layout (
  singleton    boolean     PRIMARY KEY DEFAULT true CHECK (singleton),
  legacy_until timestamptz NOT NULL
);
INSERT INTO journal_layout (legacy_until) VALUES (date_trunc('day', now(), 'UTC') + interval '2 days');

DO $$
DECLARE
  bound timestamptz := (SELECT legacy_until FROM journal_layout);
BEGIN
  EXECUTE format('ALTER TABLE tasks ADD CONSTRAINT tasks_legacy_range CHECK (created_at < %L) NOT VALID', bound);
  EXECUTE format('ALTER TABLE task_events ADD CONSTRAINT task_events_legacy_range CHECK (at < %L) NOT VALID', bound);
END
$$;
