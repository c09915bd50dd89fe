-- 000008: no index on finished_at. Every task's end wrote an entry into it, at its right-hand edge
-- where every concurrent end wrote too: measured with pgbench on the dispatched write set (insert
-- claimed, then finish; 4 clients, 2 cores), dropping it took the journal from 10,600 to 23,600
-- tasks/s. Retention, its only reader, walks the primary key instead: task ids are UUIDv7, so a
-- task that finished before the cut-off was created before it and its id sorts below the cut-off's.
DROP INDEX tasks_finished_at;
