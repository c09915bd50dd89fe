-- 000030: the partitioned journal. Unfinished tasks live in one small table, finished ones in
-- tables of one time unit each (a day unless retention.partitionIntervalMs says otherwise), by id:
-- task ids are UUIDv7, so a unit's tasks are those created within it, and its events go with them.
-- Retention drops a unit's tables whole once everything in it ended long enough ago (journal.
-- JournalUnits); no finished row is deleted one by one, and the table that claims, page-ins and
-- wake-ups read holds only what has not finished.
--
--   tasks                   RANGE (created_at)
--     tasks_legacy          before journal_layout.legacy_until: the previous layout's table, whole
--     tasks_current         from it on, LIST (state)
--       tasks_live          blocked, pending, running
--       tasks_done          succeeded, failed, cancelled, expired; RANGE (id)
--         tasks_done_<unit> one per unit (taskline_units_make)
--         tasks_done_default ids no unit covers yet (a node's clock far ahead); moved out when one does
--   task_events             RANGE (at), the same way: task_events_legacy, then
--     task_events_current   RANGE (task_id): task_events_<unit>, task_events_default
--
-- A task's end moves its row from tasks_live to its unit (an UPDATE that changes the partition, a
-- delete and an insert underneath); a retry moves it back. Statements that touch only unfinished
-- tasks say so with a literal list of the live states, which prunes every unit at planning.
--
-- Names keep working for every statement, a previous release's included: "tasks" and "task_events"
-- are the partitioned tables, with the same columns in the same order. Rows written before the bound
-- stay in the legacy tables (they are partitions like the others, read through the same names) and
-- leave by the batched deletes of the previous layout (delete_finished), as unit-less rows do. On a
-- journal that had no row, the legacy tables are left out of the layout (empty, and named only by
-- delete_finished).
--
-- One transaction, every lock taken at the start in one order and held for its milliseconds; half a
-- second is the most it waits for them (the migrator tries again), less than deadlock_timeout, as
-- in 000028.
SET LOCAL lock_timeout = '500ms';
LOCK TABLE tasks, task_events IN ACCESS EXCLUSIVE MODE;

-- A journal with no rows keeps nothing of the previous layout: its legacy tables take no row.
UPDATE journal_layout SET legacy_until = '-infinity'
 WHERE NOT EXISTS (SELECT 1 FROM tasks) AND NOT EXISTS (SELECT 1 FROM task_events);

ALTER TABLE tasks RENAME TO tasks_legacy;
ALTER TABLE task_events RENAME TO task_events_legacy;
DROP TRIGGER tasks_progress_written ON tasks_legacy;
-- The unfinished tasks' indexes keep their names on tasks_live, where the statements' plans (and
-- JournalPlansTest) look for them.
ALTER INDEX tasks_pkey RENAME TO tasks_legacy_pkey;
ALTER INDEX tasks_pending_order RENAME TO tasks_legacy_pending_order;
ALTER INDEX tasks_running_lease RENAME TO tasks_legacy_running_lease;
ALTER INDEX tasks_blocked RENAME TO tasks_legacy_blocked;
ALTER INDEX tasks_event_waits RENAME TO tasks_legacy_event_waits;
ALTER INDEX tasks_waiting RENAME TO tasks_legacy_waiting;
ALTER INDEX tasks_running_key RENAME TO tasks_legacy_running_key;
ALTER INDEX tasks_pending_start_by RENAME TO tasks_legacy_pending_start_by;
ALTER INDEX tasks_tenant_id RENAME TO tasks_legacy_tenant_id;
ALTER INDEX tasks_failed RENAME TO tasks_legacy_failed;
ALTER INDEX tasks_failed_by_id RENAME TO tasks_legacy_failed_by_id;
ALTER INDEX tasks_key_finished RENAME TO tasks_legacy_key_finished;
ALTER INDEX task_events_pkey RENAME TO task_events_legacy_pkey;

CREATE TABLE tasks (LIKE tasks_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (created_at);
ALTER TABLE tasks DROP CONSTRAINT tasks_legacy_range;
CREATE TABLE task_events (LIKE task_events_legacy INCLUDING DEFAULTS INCLUDING CONSTRAINTS) PARTITION BY RANGE (at);
ALTER TABLE task_events DROP CONSTRAINT task_events_legacy_range;
ALTER SEQUENCE task_events_event_id_seq OWNED BY task_events.event_id;

DO $$
DECLARE
  bound timestamptz := (SELECT legacy_until FROM journal_layout);
BEGIN
  IF bound = '-infinity' THEN
    -- Nothing to keep: the legacy tables stay out of the layout, empty, for the statements that name
    -- them (delete_finished), and no plan of a statement on tasks or task_events meets them.
    CREATE TABLE tasks_current PARTITION OF tasks FOR VALUES FROM (MINVALUE) TO (MAXVALUE) PARTITION BY LIST (state);
    CREATE TABLE task_events_current PARTITION OF task_events FOR VALUES FROM (MINVALUE) TO (MAXVALUE)
      PARTITION BY RANGE (task_id);
  ELSE
    EXECUTE format('CREATE TABLE tasks_current PARTITION OF tasks FOR VALUES FROM (%L) TO (MAXVALUE)'
                   ' PARTITION BY LIST (state)', bound);
    EXECUTE format('CREATE TABLE task_events_current PARTITION OF task_events FOR VALUES FROM (%L) TO (MAXVALUE)'
                   ' PARTITION BY RANGE (task_id)', bound);
    -- Proven by 000029's constraints: no scan.
    EXECUTE format('ALTER TABLE tasks ATTACH PARTITION tasks_legacy FOR VALUES FROM (MINVALUE) TO (%L)', bound);
    EXECUTE format('ALTER TABLE task_events ATTACH PARTITION task_events_legacy FOR VALUES FROM (MINVALUE) TO (%L)',
                   bound);
  END IF;
END
$$;

CREATE TABLE tasks_live PARTITION OF tasks_current FOR VALUES IN ('blocked', 'pending', 'running');
ALTER TABLE tasks_live ADD CONSTRAINT tasks_pkey PRIMARY KEY (id);
CREATE INDEX tasks_pending_order ON tasks_live (queue, priority DESC, created_at, id)
  WHERE state = 'pending' AND wait IS NULL;
CREATE INDEX tasks_running_lease ON tasks_live (lease_expires_at) WHERE state = 'running';
CREATE INDEX tasks_blocked ON tasks_live (queue, tenant) WHERE state = 'blocked';
CREATE INDEX tasks_event_waits ON tasks_live ((wait ->> 'name'), (wait ->> 'field'), (wait ->> 'value'))
  WHERE state = 'pending' AND (wait ->> 'kind') = 'event';
CREATE INDEX tasks_waiting ON tasks_live (run_at) WHERE state = 'pending' AND wait IS NOT NULL;
CREATE INDEX tasks_running_key ON tasks_live (queue, concurrency_key)
  WHERE state = 'running' AND concurrency_key IS NOT NULL;
CREATE INDEX tasks_pending_start_by ON tasks_live (start_by)
  WHERE start_by IS NOT NULL AND attempt = 0 AND finished_at IS NULL;
CREATE INDEX tasks_tenant_id ON tasks_live (tenant, id) WHERE tenant IS NOT NULL;

-- A unit's rows are written once, when their task ends (and rewritten only by a retry, which takes
-- them back to tasks_live): the indexes here cost an entry per finished task, none per transition.
CREATE TABLE tasks_done PARTITION OF tasks_current FOR VALUES IN ('succeeded', 'failed', 'cancelled', 'expired')
  PARTITION BY RANGE (id);
ALTER TABLE tasks_done ADD CONSTRAINT tasks_done_pkey PRIMARY KEY (id);
CREATE INDEX tasks_done_failed ON tasks_done (queue, type, id) WHERE state = 'failed';
CREATE INDEX tasks_done_failed_by_id ON tasks_done (id) WHERE state = 'failed';
CREATE INDEX tasks_done_tenant_id ON tasks_done (tenant, id) WHERE tenant IS NOT NULL;
CREATE INDEX tasks_done_key_finished ON tasks_done (queue, concurrency_key, finished_at)
  WHERE concurrency_key IS NOT NULL;
CREATE TABLE tasks_done_default PARTITION OF tasks_done DEFAULT;

ALTER TABLE task_events_current ADD CONSTRAINT task_events_current_pkey PRIMARY KEY (task_id, event_id);
CREATE TABLE task_events_default PARTITION OF task_events_current DEFAULT;

CREATE TRIGGER tasks_progress_written AFTER UPDATE OF progress_message ON tasks
  FOR EACH STATEMENT EXECUTE FUNCTION taskline_progress_written();

-- 000024's function returned the previous table's row type, which went with the rename.
DROP FUNCTION taskline_weighed(uuid[], bigint, bigint);
CREATE FUNCTION taskline_weighed(ids uuid[], max_inline bigint, max_page bigint)
  RETURNS TABLE (task tasks, payload_bytes bigint, result_bytes bigint, error_bytes bigint, shown boolean, ord bigint)
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  upto   bigint := 0;
  weight bigint;
  picked record;
BEGIN
  FOR picked IN
    SELECT t AS row, r.n FROM unnest(ids) WITH ORDINALITY AS r(id, n) JOIN tasks t ON t.id = r.id ORDER BY r.n
  LOOP
    task := picked.row;
    ord := picked.n;
    payload_bytes := octet_length(task.payload::text);
    result_bytes := COALESCE(octet_length(task.result::text), 0);
    error_bytes := COALESCE(octet_length(task.error::text), 0);
    weight := payload_bytes + result_bytes + error_bytes;
    IF weight <= max_inline THEN
      upto := upto + weight;
    END IF;
    shown := weight <= max_inline AND upto <= max_page;
    IF NOT shown THEN
      task.payload := NULL;
      task.result := NULL;
      task.error := NULL;
    END IF;
    RETURN NEXT;
  END LOOP;
END
$$;

-- The units made, one row each: [starts, ends) in time, [lo, hi) in task ids. dropped_at: its tables
-- are gone and the rows of other tables that belonged to it (steps, signals, edges, flows, batches)
-- are being deleted in batches; the row goes when they are.
CREATE TABLE journal_units (
  starts     timestamptz PRIMARY KEY,
  ends       timestamptz NOT NULL,
  lo         uuid        NOT NULL,
  hi         uuid        NOT NULL,
  suffix     text        NOT NULL UNIQUE,
  made_at    timestamptz NOT NULL,
  dropped_at timestamptz,
  CHECK (starts < ends AND lo < hi)
);

-- The least uuid of any id made at or after this instant's millisecond (UUIDv7: the first 48 bits
-- are the time in milliseconds since 1970; an instant before that is taken as 1970).
CREATE FUNCTION taskline_uuid_floor(at timestamptz) RETURNS uuid
  LANGUAGE sql IMMUTABLE AS $$
  SELECT (lpad(to_hex(greatest(0, floor(extract(epoch FROM at) * 1000))::bigint), 12, '0')
          || '00000000000000000000')::uuid
$$;

-- Makes every unit of every_ms milliseconds (aligned on 1970) that starts before to_at and ends after
-- from_at, where none is yet; a range an existing unit covers (made with another length) is left to
-- it. Rows of tasks_done_default and task_events_default that a new unit covers move into it before
-- it is attached. Returns how many units it made. Serialised by an advisory lock: two nodes starting
-- together make each unit once.
CREATE FUNCTION taskline_units_make(from_at timestamptz, to_at timestamptz, every_ms bigint) RETURNS integer
  LANGUAGE plpgsql AS $$
DECLARE
  every   interval := every_ms * interval '1 millisecond';
  s       timestamptz;
  e       timestamptz;
  covered timestamptz;
  suffix  text;
  lo      uuid;
  hi      uuid;
  made    integer := 0;
BEGIN
  PERFORM pg_advisory_xact_lock(x'7461736b6c696e66'::bigint);
  s := to_timestamp(floor(extract(epoch FROM from_at) * 1000 / every_ms) * every_ms / 1000.0);
  WHILE s < to_at LOOP
    e := to_timestamp((floor(extract(epoch FROM s) * 1000 / every_ms) + 1) * every_ms / 1000.0);
    SELECT max(u.ends) INTO covered FROM journal_units u WHERE u.starts < e AND u.ends > s;
    IF covered IS NOT NULL THEN
      s := covered;
      CONTINUE;
    END IF;
    -- Not into another unit's range either, which a unit made with another length may start inside.
    SELECT min(u.starts) INTO covered FROM journal_units u WHERE u.starts > s AND u.starts < e;
    IF covered IS NOT NULL THEN
      e := covered;
    END IF;
    lo := taskline_uuid_floor(s);
    hi := taskline_uuid_floor(e);
    IF lo < hi THEN
      suffix := to_char(s AT TIME ZONE 'UTC', 'YYYYMMDD"_"HH24MISS');
      EXECUTE format('CREATE TABLE %I (LIKE tasks_done INCLUDING DEFAULTS INCLUDING CONSTRAINTS)', 'tasks_done_' || suffix);
      EXECUTE format('WITH moved AS (DELETE FROM tasks_done_default WHERE id >= %L AND id < %L RETURNING *)'
                     ' INSERT INTO %I SELECT * FROM moved', lo, hi, 'tasks_done_' || suffix);
      EXECUTE format('ALTER TABLE tasks_done ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                     'tasks_done_' || suffix, lo, hi);
      EXECUTE format('CREATE TABLE %I (LIKE task_events_current INCLUDING DEFAULTS INCLUDING CONSTRAINTS)',
                     'task_events_' || suffix);
      EXECUTE format('WITH moved AS (DELETE FROM task_events_default WHERE task_id >= %L AND task_id < %L RETURNING *)'
                     ' INSERT INTO %I SELECT * FROM moved', lo, hi, 'task_events_' || suffix);
      EXECUTE format('ALTER TABLE task_events_current ATTACH PARTITION %I FOR VALUES FROM (%L) TO (%L)',
                     'task_events_' || suffix, lo, hi);
      INSERT INTO journal_units (starts, ends, lo, hi, suffix, made_at) VALUES (s, e, lo, hi, suffix, now());
      made := made + 1;
    END IF;
    s := e;
  END LOOP;
  RETURN made;
END
$$;

-- Drops (or, with archive, detaches and keeps under archived_<name>) the tables of the unit that
-- starts at unit_starts, when what it holds ended before cut: the unit ended before cut; none of its
-- finished tasks finished at or after cut; and every flow one of them belongs to ended before cut (a
-- flow goes only once it ended as a whole: until then a task of it that ended may still be a parent
-- a child reads, or a failed step a retry resumes from). A task created in the unit that has not
-- finished does not hold it: it is not in the unit's tables (tasks_live holds it), and its events
-- move to task_events_default, where its later events go too, and where retention's batches find
-- them once it ended (delete_finished). Returns null once the unit's tables are gone, else why they
-- stay ('young', 'finished <time>', 'flow').
--
-- Locks: the unit's table first in SHARE mode, so that none of its tasks ends while it is read (a
-- finish of one waits; the units of other days are not touched); then, for the drop, the parents'
-- ACCESS EXCLUSIVE locks for the milliseconds the detaches take, during which every finish and
-- event waits. A second is the most it waits for any of them (an error then: the caller tries again
-- at its next pass).
CREATE FUNCTION taskline_unit_drop(unit_starts timestamptz, cut timestamptz, archive boolean) RETURNS text
  LANGUAGE plpgsql SET lock_timeout = '1s' AS $$
DECLARE
  u      journal_units;
  last   timestamptz;
  tasks_ text;
  events text;
BEGIN
  SELECT * INTO u FROM journal_units WHERE starts = unit_starts AND dropped_at IS NULL FOR UPDATE;
  IF NOT FOUND THEN
    RETURN 'gone';
  END IF;
  IF u.ends > cut THEN
    RETURN 'young';
  END IF;
  tasks_ := 'tasks_done_' || u.suffix;
  events := 'task_events_' || u.suffix;
  EXECUTE format('LOCK TABLE %I IN SHARE MODE', tasks_);
  EXECUTE format('SELECT max(finished_at) FROM %I', tasks_) INTO last;
  IF last >= cut THEN
    RETURN 'finished ' || last;
  END IF;
  EXECUTE format('SELECT max(COALESCE(f.finished_at, ''infinity'')) FROM flows f'
                 ' WHERE f.id IN (SELECT DISTINCT flow_id FROM %I WHERE flow_id IS NOT NULL)', tasks_) INTO last;
  IF last >= cut THEN
    RETURN 'flow';
  END IF;
  LOCK TABLE tasks_done, task_events_current IN ACCESS EXCLUSIVE MODE;
  EXECUTE format('ALTER TABLE tasks_done DETACH PARTITION %I', tasks_);
  EXECUTE format('ALTER TABLE task_events_current DETACH PARTITION %I', events);
  EXECUTE format('INSERT INTO task_events_default SELECT e.* FROM %I e'
                 ' WHERE e.task_id IN (SELECT id FROM tasks_live WHERE id >= %L AND id < %L)', events, u.lo, u.hi);
  IF archive THEN
    EXECUTE format('ALTER TABLE %I RENAME TO %I', tasks_, 'archived_' || tasks_);
    EXECUTE format('ALTER TABLE %I RENAME TO %I', events, 'archived_' || events);
  ELSE
    EXECUTE format('DROP TABLE %I', tasks_);
    EXECUTE format('DROP TABLE %I', events);
  END IF;
  UPDATE journal_units SET dropped_at = now() WHERE starts = u.starts;
  RETURN NULL;
END
$$;
