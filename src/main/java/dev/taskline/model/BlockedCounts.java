package dev.taskline.model;

import java.util.Map;

/**
 * The journal's blocked flow tasks as counted at one moment: all of them, and those of each tenant
 * by queue (queue to tenant to count; tasks of no tenant are only in the total).
 */
public record BlockedCounts(long total, Map<String, Map<String, Integer>> byQueueAndTenant) {

    public static final BlockedCounts NONE = new BlockedCounts(0, Map.of());

    public BlockedCounts {
        byQueueAndTenant = Map.copyOf(byQueueAndTenant);
    }

    /** The tenant's blocked tasks in every queue. */
    public long ofTenant(String tenant) {
        long n = 0;
        for (Map<String, Integer> tenants : byQueueAndTenant.values()) {
            n += tenants.getOrDefault(tenant, 0);
        }
        return n;
    }

    /** The tenant's blocked tasks in the queue. */
    public int of(String queue, String tenant) {
        Map<String, Integer> tenants = byQueueAndTenant.get(queue);
        return tenants == null ? 0 : tenants.getOrDefault(tenant, 0);
    }
}
