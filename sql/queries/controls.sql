-- Named queries on queue_controls: what operators have set on queues, for every node to apply.

-- name: queue_pause_set
-- :queue, :paused, :now, :changed_by the key that asks (null with auth off). A queue already in the
-- asked state keeps its row as it was, so that the time shown is when it was paused, not when it
-- was last asked to be.
INSERT INTO queue_controls (queue, paused, changed_at, changed_by)
VALUES (:queue, :paused, :now, :changed_by)
ON CONFLICT (queue) DO UPDATE
   SET paused = EXCLUDED.paused, changed_at = EXCLUDED.changed_at, changed_by = EXCLUDED.changed_by
 WHERE queue_controls.paused IS DISTINCT FROM EXCLUDED.paused;

-- name: queue_controls
SELECT queue, paused, changed_at, changed_by FROM queue_controls;
