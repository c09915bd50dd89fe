-- 000029: 000028's bounds proven over every row, a scan of both tables under a lock that writes do
-- not wait for (SHARE UPDATE EXCLUSIVE), in a transaction of its own so that no exclusive lock of
-- 000028 is held meanwhile.
ALTER TABLE tasks VALIDATE CONSTRAINT tasks_legacy_range;
ALTER TABLE task_events VALIDATE CONSTRAINT task_events_legacy_range;
