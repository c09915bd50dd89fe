-- 000018: a tenant's blocked flow tasks count against each queue's tenantLimit, as its waiting and
-- running ones do. The blocked tasks are counted every few seconds (flows.maxBlocked reads the same
-- count); keyed by queue and tenant, the index answers both the total and the split from itself.
DROP INDEX tasks_blocked;
CREATE INDEX tasks_blocked ON tasks (queue, tenant) WHERE state = 'blocked';
