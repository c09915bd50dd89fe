-- 000022: the fields tasks wait on, per tenant, and forgotten once no task waits on them. An event
-- looks up each field filed for its name (000019); filed for every tenant alike and never removed,
-- one tenant's worker could make every later event of a name, any tenant's, do more lookups. Each
-- tenant's fields are now its own ('' for tasks of no tenant), and a field no pending task waits on
-- any more goes with the upkeep, once it was last filed long enough ago that no suspension filing
-- it can still be in flight.
DROP TABLE event_fields;
CREATE TABLE event_fields (
  tenant   text        NOT NULL,
  name     text        NOT NULL,
  field    text        NOT NULL,
  filed_at timestamptz NOT NULL,
  PRIMARY KEY (tenant, name, field)
);
INSERT INTO event_fields (tenant, name, field, filed_at)
SELECT DISTINCT COALESCE(tenant, ''), wait->>'name', wait->>'field', now()
  FROM tasks WHERE state = 'pending' AND wait->>'kind' = 'event';
