-- 000031: a page of a list reads the journal a range of task ids at a time, newest first: each
-- unit's range (000030), and what lies above, between and below them, so that every statement it
-- runs is planned with that range's few tables alone, not with every unit of a year.
--
-- A page reads at most `scan` tasks and `ranges` ranges, whatever its filters match, and stops at
-- `most` matches. Returns the matches' ids, newest first, then, when it stopped before reading all
-- there was, one row with no id and scanned_to: where the next page goes on (exclusive, as after).
-- klass names the tables a state filter allows ('live', 'done', 'failed': the failed tasks' own
-- index; null: all), a literal the planner prunes the others with.
CREATE FUNCTION taskline_list_window(
    after uuid, klass text, want text, queue_ text, type_ text, tenant_ text, most integer, scan integer,
    ranges integer)
  RETURNS TABLE (id uuid, scanned_to uuid)
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  top      uuid := after;
  bottom   uuid;
  examined integer := 0;
  found    integer := 0;
  read     integer := 0;
  r        record;
BEGIN
  FOR bottom IN
    SELECT b FROM (SELECT lo AS b FROM journal_units WHERE dropped_at IS NULL
                   UNION SELECT hi FROM journal_units WHERE dropped_at IS NULL
                   UNION ALL SELECT '00000000-0000-0000-0000-000000000000'::uuid) bounds
     WHERE top IS NULL OR b < top
     ORDER BY b DESC
  LOOP
    IF read = ranges THEN
      id := NULL;
      scanned_to := top;
      RETURN NEXT;
      RETURN;
    END IF;
    read := read + 1;
    -- Planned with the range's bounds and the state's tables as literals, whatever the session's
    -- plan_cache_mode: only the few tables the range can hold are planned and read.
    FOR r IN EXECUTE format(
        'SELECT t.id, t.state, t.queue, t.type FROM tasks t WHERE t.id >= %L %s %s %s ORDER BY t.id DESC',
        bottom,
        CASE WHEN top IS NULL THEN '' ELSE format('AND t.id < %L', top) END,
        CASE WHEN tenant_ IS NULL THEN '' ELSE format('AND t.tenant = %L', tenant_) END,
        CASE klass
          WHEN 'live' THEN 'AND t.state NOT IN (''succeeded'', ''failed'', ''cancelled'', ''expired'')'
          WHEN 'done' THEN 'AND t.state NOT IN (''blocked'', ''pending'', ''running'')'
          WHEN 'failed' THEN 'AND t.state = ''failed'''
          ELSE '' END)
    LOOP
      examined := examined + 1;
      IF (want IS NULL OR r.state = want) AND (queue_ IS NULL OR r.queue = queue_)
         AND (type_ IS NULL OR r.type = type_) THEN
        id := r.id;
        scanned_to := NULL;
        RETURN NEXT;
        found := found + 1;
        IF found = most THEN
          RETURN;
        END IF;
      END IF;
      IF examined = scan THEN
        id := NULL;
        scanned_to := r.id;
        RETURN NEXT;
        RETURN;
      END IF;
    END LOOP;
    top := bottom;
  END LOOP;
END
$$;

-- 000030's taskline_weighed found each task by a join with the ids, which no plan can prune by:
-- every unit's table was planned for every page (some 100 ms on a journal of 365 units; a generic
-- plan of it, which a session of the default plan_cache_mode takes, read every one of them). The
-- ids as a literal list (= ANY) let the planner keep only the units that hold them.
CREATE OR REPLACE FUNCTION taskline_weighed(ids uuid[], max_inline bigint, max_page bigint)
  RETURNS TABLE (task tasks, payload_bytes bigint, result_bytes bigint, error_bytes bigint, shown boolean, ord bigint)
  LANGUAGE plpgsql STABLE AS $$
DECLARE
  upto   bigint := 0;
  weight bigint;
  picked record;
BEGIN
  -- The ids as a literal: planned with them, whatever the session's plan_cache_mode, so that only
  -- the units that hold them are planned and read.
  FOR picked IN EXECUTE format(
      'SELECT t AS row, r.n FROM unnest(%1$L::uuid[]) WITH ORDINALITY AS r(id, n) JOIN tasks t ON t.id = r.id'
      ' WHERE t.id = ANY (%1$L::uuid[]) ORDER BY r.n', ids)
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

-- A unit's drop waits half a second at most for its locks, as the migrations do (000028): less than
-- deadlock_timeout, so that a finish that holds one of the tables it wants is never the one a
-- deadlock check ends.
ALTER FUNCTION taskline_unit_drop(timestamptz, timestamptz, boolean) SET lock_timeout = '500ms';
