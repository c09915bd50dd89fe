package dev.taskline.queue;

import java.util.ArrayList;
import java.util.HashMap;
import java.util.List;
import java.util.Map;
import java.util.UUID;
import java.util.function.ToIntFunction;

/**
 * Every task of one queue in this node's custody or reserved for it, with its tenant, and the
 * custody counts: a task enters custody when it is admitted here or read back from the journal,
 * and leaves it when it ends here or is handed back. Kept under the queue's lock with the lines,
 * so that {@code accepted - finished = waiting + scheduled + running} holds at every read; and
 * page-in never loads a second copy of a task held here. Not thread-safe.
 */
final class Custody {

    /** Stands for "no tenant" in {@link #held}; compared by identity, so no tenant's name can be it. */
    @SuppressWarnings("StringOperationCanBeSimplified")
    private static final String NO_TENANT = new String("");

    private final int tenantLimit;
    private final ToIntFunction<String> blocked;
    /** Every task in custody or reserved, with its tenant ({@link #NO_TENANT} for none). */
    private final Map<UUID, String> held = new HashMap<>();
    /** Of those, how many each tenant has: what the queue's tenant limit bounds. */
    private final Map<String, Integer> byTenant = new HashMap<>();

    private long accepted;
    private long finished;

    /**
     * @param tenantLimit most unfinished and reserved tasks a tenant may have here; 0: no limit
     * @param blocked     a tenant's blocked flow tasks bound for this queue: unfinished, and counted
     *                    against its limit, though in no node's custody until they become pending
     */
    Custody(int tenantLimit, ToIntFunction<String> blocked) {
        this.tenantLimit = tenantLimit;
        this.blocked = blocked;
    }

    Custody(int tenantLimit) {
        this(tenantLimit, tenant -> 0);
    }

    /** Takes {@code id} into custody; false when it already was. */
    boolean hold(UUID id, String tenant) {
        // One lookup: the map holds NO_TENANT rather than null, so that putIfAbsent tells the cases apart.
        if (held.putIfAbsent(id, tenant == null ? NO_TENANT : tenant) != null) {
            return false;
        }
        if (tenant != null) {
            byTenant.merge(tenant, 1, Integer::sum);
        }
        return true;
    }

    /** Lets {@code id} go (it was never counted accepted, or it is counted finished besides). */
    void release(UUID id) {
        String tenant = held.remove(id);
        if (tenant != null && tenant != NO_TENANT) {
            byTenant.computeIfPresent(tenant, (t, n) -> n == 1 ? null : n - 1);
        }
    }

    boolean holds(UUID id) {
        return held.containsKey(id);
    }

    /** Whether {@code wanted} more tasks of {@code tenant} (null: none) stay within its limit. */
    boolean tenantFits(String tenant, int wanted) {
        return tenant == null || tenantLimit == 0 || tenantHeld(tenant) + wanted <= tenantLimit;
    }

    /** Unfinished and reserved tasks of {@code tenant}, its blocked ones with them. */
    int tenantHeld(String tenant) {
        return byTenant.getOrDefault(tenant, 0) + blocked.applyAsInt(tenant);
    }

    List<UUID> ids() {
        return new ArrayList<>(held.keySet());
    }

    /** {@code n} tasks came into custody: admitted, or read back. */
    void accepted(int n) {
        accepted += n;
    }

    /** A task left custody: it ended here, or it is someone else's now. */
    void left() {
        finished++;
    }

    long accepted() {
        return accepted;
    }

    long finished() {
        return finished;
    }
}
