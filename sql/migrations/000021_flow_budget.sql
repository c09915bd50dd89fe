-- 000021: a flow's budget holds whatever made its tasks. A flow counts its edges (task_edges rows
-- into its tasks) beside its size, so that a task that spawns more is held to flows.maxTasks and to
-- the flow's edge cap through every generation, read from the flow's row rather than by counting
-- its edges at each spawn.
ALTER TABLE flows ADD COLUMN edges integer NOT NULL DEFAULT 0;

-- Flows still running count what they have; an ended flow spawns no more.
UPDATE flows f
   SET edges = (SELECT count(*) FROM task_edges e JOIN tasks t ON t.id = e.child_id
                 WHERE t.id BETWEEN f.first_task_id AND f.last_task_id AND t.flow_id = f.id)
 WHERE f.state = 'running';
