-- 000009: what an operator has set on a queue, shared by every node on this journal. A queue with
-- no row has nothing set. Nodes read the table about twice a second (FlowVerticle), so a change
-- made through any node's API reaches all of them within a second, and it outlives restarts.
CREATE TABLE queue_controls (
  queue      text PRIMARY KEY,
  paused     boolean NOT NULL DEFAULT false,
  changed_at timestamptz NOT NULL,
  -- The API key that made the change; null with auth off.
  changed_by text
);
