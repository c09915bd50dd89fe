-- 000006: a tenant's key lists only its tenant's tasks, newest first; without this index that
-- page would walk every tenant's tasks to find its own. Partial: tasks without a tenant (a
-- single-tenant deployment's) cost nothing more to insert.
CREATE INDEX tasks_tenant_id ON tasks (tenant, id) WHERE tenant IS NOT NULL;
