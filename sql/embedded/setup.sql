-- The embedded cluster's roles, set when it gets its passwords: once for a new cluster, and once for
-- one made before it had them (its journal then belongs to the superuser, and is handed over). It
-- runs in single-user mode, before any server listens, so nothing here reaches a log or a socket.
-- :superuser_password and :app_password stand for quoted literals. Each statement ends with a
-- semicolon and a blank line, which is how single-user mode (-j) tells them apart, and so no blank
-- line may sit inside one. Whole-line comments are dropped before the text is sent.

ALTER ROLE postgres PASSWORD :superuser_password;

DO $$
BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'taskline') THEN
    CREATE ROLE taskline;
  END IF;
END
$$;

ALTER ROLE taskline LOGIN NOSUPERUSER NOCREATEDB NOCREATEROLE NOREPLICATION NOBYPASSRLS PASSWORD :app_password;

ALTER DATABASE postgres OWNER TO taskline;

DO $$
DECLARE
  object record;
BEGIN
  FOR object IN
    SELECT format('ALTER %s %I.%I OWNER TO taskline',
                  CASE c.relkind WHEN 'v' THEN 'VIEW' WHEN 'm' THEN 'MATERIALIZED VIEW' ELSE 'TABLE' END,
                  n.nspname, c.relname) AS ddl
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind IN ('r', 'p', 'v', 'm') AND c.relowner = 'postgres'::regrole
  LOOP
    EXECUTE object.ddl;
  END LOOP;
  -- A table's serial sequences went with it, the others go now.
  FOR object IN
    SELECT format('ALTER SEQUENCE %I.%I OWNER TO taskline', n.nspname, c.relname) AS ddl
      FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
     WHERE n.nspname = 'public' AND c.relkind = 'S' AND c.relowner = 'postgres'::regrole
  LOOP
    EXECUTE object.ddl;
  END LOOP;
  FOR object IN
    SELECT format('ALTER ROUTINE %s OWNER TO taskline', p.oid::regprocedure) AS ddl
      FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
     WHERE n.nspname = 'public' AND p.proowner = 'postgres'::regrole
  LOOP
    EXECUTE object.ddl;
  END LOOP;
END
$$;
