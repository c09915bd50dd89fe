-- 000011: a keyed claim's time is never earlier than the last write to its key's tasks. Claims of a
-- key are serialized by its lock, ends are not, and each write's time is the node's clock when its
-- statement was sent, not when it committed: a claim that saw an end commit could otherwise carry
-- an earlier time than that end, and the journal would show one task more of the key running than
-- there ever was. claim_keyed reads the key's latest write through this index; only keyed tasks have
-- entries in it.
CREATE INDEX tasks_key_updated ON tasks (queue, concurrency_key, updated_at)
  WHERE concurrency_key IS NOT NULL;
