-- 000010: keyed concurrency. A task may carry a concurrency key; its queue bounds how many tasks of
-- one key run at once across every node on this journal. Claims of keyed tasks count the key's
-- running tasks through this index, which holds an entry only while a keyed task runs: tasks
-- without a key never enter it, so their transitions pay nothing for it.
ALTER TABLE tasks ADD COLUMN concurrency_key text;
CREATE INDEX tasks_running_key ON tasks (queue, concurrency_key)
  WHERE state = 'running' AND concurrency_key IS NOT NULL;
