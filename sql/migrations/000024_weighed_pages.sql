-- 000024: a page of tasks weighed once, for every read that lists tasks whole (a list, a tenant's
-- list, a batch's view). Each task's payload, result and error are kept unless together they weigh
-- more than max_inline, or the page's kept ones would pass max_page (summed in the page's order over
-- the tasks light enough to show): then the three are null and their sizes say what they weigh, and
-- the task's own read shows them. STABLE, so that it reads with the calling statement's snapshot: the
-- page is the one the caller's filter chose.
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
